package watch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Supported reports whether this system has a watcher.
const Supported = true

// OnByDefault: checkpoints use the watcher unless REWIND_WATCH=off.
const OnByDefault = true

const watchMask = syscall.IN_CREATE | syscall.IN_DELETE | syscall.IN_MODIFY | syscall.IN_ATTRIB |
	syscall.IN_MOVED_FROM | syscall.IN_MOVED_TO | syscall.IN_CLOSE_WRITE | syscall.IN_DELETE_SELF |
	syscall.IN_MOVE_SELF | syscall.IN_ONLYDIR | syscall.IN_DONT_FOLLOW | syscall.IN_EXCL_UNLINK

// tree watches every directory under root through one inotify instance, so that all its events
// arrive in one queue in the order they happened.
//
// It reaches them from the root's descriptor (/proc/self/fd/N/<path>), never by the root's path:
// a renamed parent (or the root moved) changes nothing of what it watches, and a folder made
// again at the root's old path is never mistaken for it. Its answers hold only for what it can
// prove: when the root's path no longer names that folder (moved, replaced, mounted over), or
// the mounts at or below it change, it refuses (unexact).
type tree struct {
	root    string
	skipRel string // a directory not to watch, relative (the store, when it is inside the workspace)
	cookie  string // the cookie directory, watched too
	f       *os.File
	fd      int // f's descriptor, used only with mu held and f open (Fd would make f blocking)

	rootFd  int         // the workspace's folder, open: every path is reached from it
	rootID  folderID    // its device, inode and mount
	mounts  *mountTable // the mount table, polled for changes at or below the root
	fdPaths string      // "/proc/self/fd/<rootFd>"

	rmu      sync.Mutex     // held while reading events and recording them (drain)
	askBuf   [64 << 10]byte // what caughtUp drains into, with rmu held (a new one per question cost 2 µs)
	mu       sync.Mutex
	wds      map[int]string // watch descriptor -> directory, relative ("" for the root)
	dirs     map[string]int
	cookieWd int
	changeLog
	broken  string // set when the watch cannot be trusted any more
	gone    bool   // the workspace's folder was removed or moved
	waiters map[string]chan struct{}

	mountPoints map[string]bool // folders below the root on a mount of their own: not watched, reported in every answer
	files       map[int]*linked // files with more than one name, by their own watch (links_linux.go)
	names       map[string]int  // their names, to those watches
	unsure      map[int]bool    // file watches made with fewer names known than the file has links
}

// remoteFS are file systems whose files other machines or processes can change without inotify
// seeing it (statfs f_type): no watcher there, checkpoints walk.
var remoteFS = map[uint32]string{0x6969: "NFS", 0xff534d42: "CIFS", 0xfe534d42: "SMB2", 0x517b: "SMB",
	0x65735546: "FUSE", 0x01021997: "9p", 0x564c: "NCP", 0x6b414653: "AFS", 0x73757245: "Coda", 0x47504653: "GPFS", 0x0bd00bd0: "Lustre"}

// newTree watches the workspace root, every folder under it but skip (its store, when inside
// it), and the cookie folder, and learns the names of its files with more than one link.
func newTree(root, skip, cookie string) (*tree, error) {
	var fs syscall.Statfs_t
	if err := syscall.Statfs(root, &fs); err != nil {
		return nil, fmt.Errorf("statfs %s: %w", root, err)
	}
	if name, ok := remoteFS[uint32(fs.Type)]; ok {
		return nil, fmt.Errorf("%s is on %s, where inotify does not see every change: checkpoints walk the tree", root, name)
	}
	t := &tree{root: root, cookie: cookie, fd: -1, rootFd: -1,
		wds: map[int]string{}, dirs: map[string]int{}, changeLog: changeLog{changes: map[string]uint64{}}, waiters: map[string]chan struct{}{},
		mountPoints: map[string]bool{}, files: map[int]*linked{}, names: map[string]int{}, unsure: map[int]bool{}}
	if rel, err := filepath.Rel(root, skip); skip != "" && err == nil && filepath.IsLocal(rel) {
		t.skipRel = filepath.ToSlash(rel)
	}
	if err := t.open(); err != nil {
		t.closeAll()
		return nil, err
	}
	t.mu.Lock()
	err := t.addTree("")
	if err == nil {
		_, err = t.learnNames() // the names of files linked from outside, or while the folders were read
	}
	t.mu.Unlock()
	if err != nil {
		t.closeAll()
		return nil, err
	}
	return t, nil
}

// open opens the root, the mount table and the inotify instance, and watches the cookie folder.
func (t *tree) open() error {
	var err error
	if t.rootFd, err = syscall.Open(t.root, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0); err != nil {
		return fmt.Errorf("open %s: %w", t.root, err)
	}
	t.fdPaths = "/proc/self/fd/" + strconv.Itoa(t.rootFd)
	if t.rootID, err = statID(t.rootFd, "", unix.AT_EMPTY_PATH); err != nil {
		return fmt.Errorf("%s: %w", t.root, err)
	}
	if t.mounts, err = openMountTable(t.fdPaths); err != nil {
		return err
	}
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if errors.Is(err, syscall.EMFILE) {
		return errors.New("the inotify instance limit is reached (raise fs.inotify.max_user_instances), or this process's open-file limit: checkpoints walk the tree")
	} else if err != nil {
		return fmt.Errorf("inotify: %w", err)
	}
	t.f, t.fd = os.NewFile(uintptr(fd), "inotify"), fd
	if t.cookieWd, err = syscall.InotifyAddWatch(fd, t.cookie, syscall.IN_CREATE|syscall.IN_ONLYDIR); err != nil {
		return fmt.Errorf("watch %s: %w", t.cookie, limitErr(err))
	}
	return nil
}

// path is how the watcher reaches rel, relative to the root: from the root's descriptor.
func (t *tree) path(rel string) string {
	if rel == "" {
		return t.fdPaths + "/."
	}
	return t.fdPaths + "/" + rel
}

// limitErr names the sysctl to raise for the inotify watch limit, and is err otherwise.
func limitErr(err error) error {
	if errors.Is(err, syscall.ENOSPC) {
		return errors.New("the inotify watch limit is reached (raise fs.inotify.max_user_watches, or list large folders in .rewindignore)")
	}
	return err
}

// addTree watches directory rel and every directory under it, learns the names of the files
// with more than one link in them, and notes the mount points below (which it does not enter).
// Called with mu held.
func (t *tree) addTree(rel string) error {
	if rel == t.skipRel && rel != "" || t.fd < 0 {
		return nil
	}
	full := t.path(rel)
	if rel != "" {
		id, err := statID(unix.AT_FDCWD, full, unix.AT_SYMLINK_NOFOLLOW)
		if err != nil {
			if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR) {
				return nil // gone again: its parent's event covers it
			}
			return fmt.Errorf("statx %s: %w", filepath.Join(t.root, rel), err)
		}
		if id.mnt != t.rootID.mnt {
			t.mountPoints[rel] = true // inotify would not see into it as the walk does: read whole each time
			return nil
		}
	}
	wd, err := syscall.InotifyAddWatch(t.fd, full, watchMask)
	if err != nil {
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR) {
			return nil // gone again, or not a directory: its parent's event covers it
		}
		if errors.Is(err, syscall.ENOSPC) {
			return fmt.Errorf("%w, at %s", limitErr(err), filepath.Join(t.root, rel))
		}
		return fmt.Errorf("watch %s: %w", filepath.Join(t.root, rel), err)
	}
	if old, ok := t.wds[wd]; ok && old != rel {
		delete(t.dirs, old)
	}
	t.wds[wd], t.dirs[rel] = rel, wd
	f, err := os.Open(full)
	if err != nil {
		return nil // removed meanwhile: its parent's event covers it
	}
	ents, _ := f.ReadDir(-1)
	err = t.lookIn(rel, f, ents, nil)
	f.Close()
	if err != nil {
		return err
	}
	for _, e := range ents {
		if e.IsDir() { // ReadDir does not follow symlinks
			if err := t.addTree(join(rel, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// dropTree forgets directory rel and those under it (moved away: their watches would report
// under the old name), with the names and mount points under it. Called with mu held.
func (t *tree) dropTree(rel string) {
	under := func(p string) bool { return p == rel || strings.HasPrefix(p, rel+"/") }
	for d, wd := range t.dirs {
		if under(d) {
			syscall.InotifyRmWatch(t.fd, uint32(wd))
			delete(t.dirs, d)
			delete(t.wds, wd)
		}
	}
	for p := range t.mountPoints {
		if under(p) {
			delete(t.mountPoints, p)
		}
	}
	for p := range t.names {
		if under(p) {
			t.untrack(p)
		}
	}
}

// read handles events until the inotify file is closed.
func (t *tree) read() {
	rc, err := t.f.SyscallConn()
	if err != nil {
		return
	}
	buf := make([]byte, 64<<10)
	// Drain what is queued, then wait until more is; returns once the descriptor is closed.
	rc.Read(func(fd uintptr) bool { return !t.drain(int(fd), buf) })
}

// drain reads and records every event the kernel has queued, until none is left (true), or the
// descriptor fails or is closed (false). rmu makes reading a batch and recording it one step, so
// that whoever holds rmu after a drain knows every queued event has been recorded.
func (t *tree) drain(fd int, buf []byte) bool {
	t.rmu.Lock()
	defer t.rmu.Unlock()
	t.mu.Lock()
	open := t.fd == fd // close sets -1, holding rmu, before it closes fd
	t.mu.Unlock()
	if !open {
		return false
	}
	for {
		n, err := syscall.Read(fd, buf)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return true
		case err != nil || n <= 0:
			return false
		}
		t.mu.Lock()
		if t.fd < 0 {
			t.mu.Unlock()
			return false
		}
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := buf[off+syscall.SizeofInotifyEvent : off+syscall.SizeofInotifyEvent+int(ev.Len)]
			if i := strings.IndexByte(string(name), 0); i >= 0 {
				name = name[:i]
			}
			t.event(int(ev.Wd), ev.Mask, string(name))
			off += syscall.SizeofInotifyEvent + int(ev.Len)
		}
		t.mu.Unlock()
	}
}

// catchUp returns once every event that happened before it was called has been recorded: for
// a question asked in this process (local) by draining the queue (caughtUp), else through
// cookie, the server's cookie round trip.
func (t *tree) catchUp(local bool, cookie func() error) error {
	if local {
		return t.caughtUp()
	}
	return cookie()
}

// caughtUp records every event queued so far, for a question asked in this process: inotify
// queues an event in the system call that makes the change, so a change made before the
// question is queued before it, and draining the queue has seen it, with no cookie round trip.
func (t *tree) caughtUp() error {
	t.mu.Lock()
	fd := t.fd
	t.mu.Unlock()
	if fd < 0 || !t.drain(fd, t.askBuf[:]) {
		return errors.New("the watcher has stopped")
	}
	return nil
}

// event records one event. Called with mu held.
func (t *tree) event(wd int, mask uint32, name string) {
	if mask&syscall.IN_Q_OVERFLOW != 0 {
		t.broken = "the kernel's event queue overflowed"
		return
	}
	if mask&syscall.IN_UNMOUNT != 0 {
		t.broken = "a file system the watcher watched was unmounted"
		return
	}
	if wd == t.cookieWd {
		if c, ok := t.waiters[name]; ok {
			close(c)
			delete(t.waiters, name)
		}
		return
	}
	if l := t.files[wd]; l != nil {
		t.fileEvent(wd, l, mask)
		return
	}
	dir, ok := t.wds[wd]
	if !ok {
		return // a watch already dropped
	}
	if mask&syscall.IN_IGNORED != 0 {
		delete(t.wds, wd)
		if t.dirs[dir] == wd {
			delete(t.dirs, dir)
		}
		if dir == "" {
			t.gone = true
		}
		return
	}
	if name == "" { // about the directory itself: its parent reports what matters
		if dir == "" && mask&(syscall.IN_DELETE_SELF|syscall.IN_MOVE_SELF) != 0 {
			t.gone = true
		}
		if dir == "" || mask&syscall.IN_ATTRIB == 0 {
			return
		}
	}
	p := name
	if dir != "" && name != "" {
		p = dir + "/" + name
	} else if name == "" {
		p = dir
	}
	if p == t.skipRel {
		return
	}
	t.mark(p)
	switch {
	case mask&syscall.IN_ISDIR == 0 && name != "":
		if err := t.nameEvent(p, mask); err != nil {
			t.broken = err.Error()
		}
	case mask&(syscall.IN_MOVED_FROM|syscall.IN_DELETE) != 0:
		t.dropTree(p)
	case mask&(syscall.IN_CREATE|syscall.IN_MOVED_TO) != 0:
		if err := t.addTree(p); err != nil {
			t.broken = err.Error()
		}
	}
}

func (t *tree) close() error {
	t.rmu.Lock() // no drain is reading the descriptor; none starts after this
	t.mu.Lock()
	t.fd = -1
	t.mu.Unlock()
	t.rmu.Unlock()
	return t.closeAll() // the inotify file's Close waits for the reader's drain, which now stops
}

// closeAll closes what open opened.
func (t *tree) closeAll() error {
	var err error
	if t.f != nil {
		err = t.f.Close()
	}
	if t.mounts != nil {
		t.mounts.close()
	}
	if t.rootFd >= 0 {
		syscall.Close(t.rootFd)
	}
	return err
}

// watched is how many directories are watched.
func (t *tree) watched() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.dirs)
}

// since answers r, a question for the changes after token tok of watcher id: the paths changed
// after it (with every mount point below the root, which the watcher cannot see into), and the
// token of now; or why it cannot answer (with no token when the watcher cannot be trusted any
// more: it then stops). Called once the cookie round trip has shown every earlier event was read.
func (t *tree) since(id, tok string, r *Reply) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.broken == "" {
		t.broken = t.unexact()
	}
	if t.broken == "" {
		refused, err := t.learnNames()
		if err != nil {
			t.broken = err.Error()
		}
		r.Refused = refused
	}
	if t.broken != "" {
		r.Refused = t.broken
		return
	}
	r.Token = t.token(id)
	if r.Refused != "" {
		return
	}
	n, refused := t.check(id, tok)
	if r.Refused = refused; refused != "" {
		return
	}
	for p := range t.after(n) {
		r.Paths = append(r.Paths, p)
		if _, ok := t.names[p]; ok {
			r.Linked++
		}
	}
	for p := range t.mountPoints {
		r.Mounts = append(r.Mounts, p)
		if s, ok := t.changes[p]; !ok || s <= n {
			r.Paths = append(r.Paths, p)
		}
	}
	slices.Sort(r.Mounts)
}

// unexact says why the watches no longer cover the workspace's folder ("" while they do).
// Called with mu held.
func (t *tree) unexact() string {
	if why := t.rootMoved(); why != "" {
		return why
	}
	why, err := t.mounts.changed()
	if err != nil {
		return err.Error()
	}
	return why
}

// rootMoved says why the root's path no longer names the folder the watcher watches ("" while
// it does): the folder was moved (or its parent), removed, replaced, or mounted over.
func (t *tree) rootMoved() string {
	id, err := statID(unix.AT_FDCWD, t.root, 0)
	if err != nil || id != t.rootID {
		return fmt.Sprintf("%s is not the folder this watcher watches any more (it was moved, removed, replaced or mounted over): checkpoints walk the tree until a watcher of the folder there starts", t.root)
	}
	return ""
}
