package watch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"unsafe"
)

// Supported reports whether this system has a watcher.
const Supported = true

const watchMask = syscall.IN_CREATE | syscall.IN_DELETE | syscall.IN_MODIFY | syscall.IN_ATTRIB |
	syscall.IN_MOVED_FROM | syscall.IN_MOVED_TO | syscall.IN_CLOSE_WRITE | syscall.IN_DELETE_SELF |
	syscall.IN_MOVE_SELF | syscall.IN_ONLYDIR | syscall.IN_DONT_FOLLOW | syscall.IN_EXCL_UNLINK

// maxTracked caps the changed paths kept: past it they are dropped, and tokens older than the
// drop are refused (a full walk costs about the same as that many paths).
const maxTracked = 100000

// tree watches every directory under root through one inotify instance, so that all its events
// arrive in one queue in the order they happened.
type tree struct {
	root   string
	skip   string // a directory not to watch (the store, when it is inside the workspace)
	cookie string // the cookie directory, watched too
	f      *os.File
	fd     int // f's descriptor, used only with mu held and f open (Fd would make f blocking)

	rmu      sync.Mutex // held while reading events and recording them (drain)
	mu       sync.Mutex
	wds      map[int]string // watch descriptor -> directory, relative ("" for the root)
	dirs     map[string]int
	cookieWd int
	seq      uint64
	changes  map[string]uint64 // path -> the number of its last change
	lostAt   uint64            // tokens before this number are refused
	broken   string            // set when the watch cannot be trusted any more
	gone     bool              // the workspace's folder was removed or moved
	waiters  map[string]chan struct{}
}

// remoteFS are file systems whose files other machines or processes can change without inotify
// seeing it (statfs f_type): no watcher there, checkpoints walk.
var remoteFS = map[uint32]string{0x6969: "NFS", 0xff534d42: "CIFS", 0xfe534d42: "SMB2", 0x517b: "SMB",
	0x65735546: "FUSE", 0x01021997: "9p", 0x564c: "NCP", 0x6b414653: "AFS", 0x73757245: "Coda", 0x47504653: "GPFS", 0x0bd00bd0: "Lustre"}

func newTree(root, skip, cookie string) (*tree, error) {
	var fs syscall.Statfs_t
	if err := syscall.Statfs(root, &fs); err != nil {
		return nil, fmt.Errorf("statfs %s: %w", root, err)
	}
	if name, ok := remoteFS[uint32(fs.Type)]; ok {
		return nil, fmt.Errorf("%s is on %s, where inotify does not see every change: checkpoints walk the tree", root, name)
	}
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("inotify: %w", err)
	}
	t := &tree{root: root, skip: skip, cookie: cookie, f: os.NewFile(uintptr(fd), "inotify"), fd: fd,
		wds: map[int]string{}, dirs: map[string]int{}, changes: map[string]uint64{}, waiters: map[string]chan struct{}{}}
	wd, err := syscall.InotifyAddWatch(fd, cookie, syscall.IN_CREATE|syscall.IN_ONLYDIR)
	if err != nil {
		t.f.Close()
		return nil, fmt.Errorf("watch %s: %w", cookie, err)
	}
	t.cookieWd = wd
	t.mu.Lock()
	err = t.addTree("")
	t.mu.Unlock()
	if err != nil {
		t.f.Close()
		return nil, err
	}
	return t, nil
}

// addTree watches directory rel and every directory under it. Called with mu held.
func (t *tree) addTree(rel string) error {
	full := filepath.Join(t.root, rel)
	if full == t.skip || t.fd < 0 {
		return nil
	}
	wd, err := syscall.InotifyAddWatch(t.fd, full, watchMask)
	if err != nil {
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR) {
			return nil // gone again, or not a directory: its parent's event covers it
		}
		if errors.Is(err, syscall.ENOSPC) {
			return fmt.Errorf("the inotify watch limit is reached at %s (raise fs.inotify.max_user_watches, or list large folders in .rewindignore)", full)
		}
		return fmt.Errorf("watch %s: %w", full, err)
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
	f.Close()
	for _, e := range ents {
		if e.IsDir() { // ReadDir does not follow symlinks
			if err := t.addTree(filepath.Join(rel, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// dropTree forgets directory rel and those under it (moved away: their watches would report
// under the old name). Called with mu held.
func (t *tree) dropTree(rel string) {
	for d, wd := range t.dirs {
		if d == rel || strings.HasPrefix(d, rel+"/") {
			syscall.InotifyRmWatch(t.fd, uint32(wd))
			delete(t.dirs, d)
			delete(t.wds, wd)
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

// caughtUp records every event queued so far, for a question asked in this process: inotify
// queues an event in the system call that makes the change, so a change made before the
// question is queued before it, and draining the queue has seen it, with no cookie round trip.
func (t *tree) caughtUp() error {
	t.mu.Lock()
	fd := t.fd
	t.mu.Unlock()
	if fd < 0 || !t.drain(fd, make([]byte, 64<<10)) {
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
	if wd == t.cookieWd {
		if c, ok := t.waiters[name]; ok {
			close(c)
			delete(t.waiters, name)
		}
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
	if filepath.Join(t.root, p) == t.skip {
		return
	}
	t.seq++
	t.changes[p] = t.seq
	if len(t.changes) > maxTracked {
		clear(t.changes)
		t.lostAt = t.seq
	}
	if mask&syscall.IN_ISDIR != 0 {
		switch {
		case mask&(syscall.IN_MOVED_FROM|syscall.IN_DELETE) != 0:
			t.dropTree(p)
		case mask&(syscall.IN_CREATE|syscall.IN_MOVED_TO) != 0:
			if err := t.addTree(p); err != nil {
				t.broken = err.Error()
			}
		}
	}
}

func (t *tree) close() error {
	t.rmu.Lock() // no drain is reading the descriptor; none starts after this
	t.mu.Lock()
	t.fd = -1
	t.mu.Unlock()
	t.rmu.Unlock()
	return t.f.Close() // waits for the reader's drain, which now stops
}

// watched is how many directories are watched.
func (t *tree) watched() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.dirs)
}

// since returns the paths changed after token tok of watcher id, and the token of now; or why it
// cannot answer. Called once the cookie round trip has shown every earlier event was read.
func (t *tree) since(id, tok string) (paths []string, now, refused string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now = fmt.Sprintf("%s:%d", id, t.seq)
	if t.broken != "" {
		return nil, "", t.broken
	}
	if tok == "" {
		return nil, now, "no token yet: this is the first checkpoint this watcher sees"
	}
	wid, n, ok := parseToken(tok)
	if !ok {
		return nil, now, fmt.Sprintf("token %q is not <id>:<number>", tok)
	}
	if wid != id {
		return nil, now, "the token is from an earlier watcher (it was restarted)"
	}
	if n > t.seq {
		return nil, now, fmt.Sprintf("token %q is ahead of the watcher (%d)", tok, t.seq)
	}
	if n < t.lostAt {
		return nil, now, "changes since the token were too many to keep"
	}
	for p, s := range t.changes {
		if s > n {
			paths = append(paths, p)
		}
	}
	return paths, now, ""
}
