package watch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/agent-rewind/rewind/internal/winpath"
)

// Supported reports whether this system has a watcher.
const Supported = true

// OnByDefault is false here: the Windows watcher is a preview that has run only under Wine, so
// checkpoints use it only with REWIND_WATCH=on (docs/watch.md, "On Windows").
const OnByDefault = false

// notifyFilter is every kind of change ReadDirectoryChangesW reports.
const notifyFilter = windows.FILE_NOTIFY_CHANGE_FILE_NAME | windows.FILE_NOTIFY_CHANGE_DIR_NAME |
	windows.FILE_NOTIFY_CHANGE_ATTRIBUTES | windows.FILE_NOTIFY_CHANGE_SIZE | windows.FILE_NOTIFY_CHANGE_LAST_WRITE |
	windows.FILE_NOTIFY_CHANGE_CREATION | windows.FILE_NOTIFY_CHANGE_SECURITY

// notifyBuffer is the size of the buffer a watch's changes are read into: 512 KiB, as git's
// fsmonitor daemon takes on a local drive (a network share takes 64 KiB at most; no watcher
// runs on one). Changes that do not fit before the watcher reads them are lost, and the system
// says so (an empty read, or ERROR_NOTIFY_ENUM_DIR). A test makes it small to force that.
var notifyBuffer = 512 << 10

// tree watches the workspace root through one ReadDirectoryChangesW of its whole subtree, and
// the cookie folder through another, both read by one thread (read).
//
// It holds the root open, sharing deletion, so that the folder can still be moved or removed;
// when the root's path no longer names that folder (its file ID differs) it refuses. A reported
// name is recorded as the folder holds it (canonical.go); reparse points below the root and
// files with more than one name are named in every answer (special_windows.go).
type tree struct {
	root    string
	skipRel string // a folder not to report, relative (the store, when it is inside the workspace)
	cookie  string // the cookie folder

	rootW, cookieW *dirWatch
	rootID         fileKey
	quit           windows.Handle // set by close: the reader stops
	done           chan struct{}  // closed when the reader has stopped and no read is pending

	mu sync.Mutex
	changeLog
	broken  string // set when the watch cannot be trusted any more
	gone    bool   // the workspace's folder was removed or moved
	waiters map[string]chan struct{}

	movesLost bool                    // the system's watch does not follow a folder moved inside the root (Wine)
	special   map[string]bool         // reparse points below the root (junctions, mount points, symlinks, cloud files)
	names     map[string]fileKey      // names of files with more than one link, to the file
	files     map[fileKey]*linkedFile // those files
	unsure    bool                    // a file has more links than names known: read the tree again before answering
	dirAttrs  map[string]uint32       // every folder's attributes, to tell its own change from its entries'
	canonical map[string]string       // reported folder path -> the path as the folders hold it
}

// dirWatch is one folder's pending ReadDirectoryChangesW.
type dirWatch struct {
	h       windows.Handle
	ov      windows.Overlapped
	buf     []byte
	subtree bool
	filter  uint32
}

// openWatch opens folder path for watching (sharing reads, writes and deletion: the watch must
// not keep anyone from moving or removing it) with a manual-reset event for its reads.
func openWatch(path string, subtree bool, filter uint32) (*dirWatch, error) {
	p, err := windows.UTF16PtrFromString(winpath.Long(path))
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", path, err)
	}
	h, err := windows.CreateFile(p, windows.FILE_LIST_DIRECTORY,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil, windows.OPEN_EXISTING,
		windows.FILE_FLAG_BACKUP_SEMANTICS|windows.FILE_FLAG_OVERLAPPED, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s to watch it: %w", path, err)
	}
	ev, err := windows.CreateEvent(nil, 1, 0, nil)
	if err != nil {
		windows.CloseHandle(h)
		return nil, fmt.Errorf("watch %s: %w", path, err)
	}
	words := make([]uint64, (notifyBuffer+7)/8) // FILE_NOTIFY_INFORMATION is DWORD-aligned
	w := &dirWatch{h: h, subtree: subtree, filter: filter, buf: unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), len(words)*8)}
	w.ov.HEvent = ev
	return w, nil
}

// issue starts the next read. The system keeps what changes while no read is pending, from the
// first read on, and hands it to the next one.
func (w *dirWatch) issue() error {
	windows.ResetEvent(w.ov.HEvent)
	return windows.ReadDirectoryChanges(w.h, &w.buf[0], uint32(len(w.buf)), w.subtree, w.filter, nil, &w.ov, 0)
}

// result is what the completed read returned: its size, 0 when changes were lost.
func (w *dirWatch) result() (int, error) {
	var n uint32
	err := windows.GetOverlappedResult(w.h, &w.ov, &n, false)
	return int(n), err
}

// stop cancels the pending read and waits for it to end, so that its buffer is no longer written.
func (w *dirWatch) stop() {
	if windows.CancelIoEx(w.h, &w.ov) == nil {
		var n uint32
		windows.GetOverlappedResult(w.h, &w.ov, &n, true)
	}
}

func (w *dirWatch) close() {
	windows.CloseHandle(w.h)
	windows.CloseHandle(w.ov.HEvent)
}

// names yields each change in b, what a read returned: its action and the name reported,
// relative to the watched folder with backslashes.
func changes(b []byte, yield func(action uint32, name string)) {
	const head = int(unsafe.Offsetof(windows.FileNotifyInformation{}.FileName))
	for off := 0; off+head <= len(b); {
		fi := (*windows.FileNotifyInformation)(unsafe.Pointer(&b[off]))
		if off+head+int(fi.FileNameLength) > len(b) {
			return
		}
		name := unsafe.Slice(&fi.FileName, fi.FileNameLength/2)
		yield(fi.Action, windows.UTF16ToString(name))
		if fi.NextEntryOffset == 0 {
			return
		}
		off += int(fi.NextEntryOffset)
	}
}

// newTree watches the workspace root but skip (its store, when inside it) and the cookie
// folder, then reads the tree for what it must name in every answer.
func newTree(root, skip, cookie string) (*tree, error) {
	t := &tree{root: root, cookie: cookie, done: make(chan struct{}), waiters: map[string]chan struct{}{},
		movesLost: winpath.UnderWine(), special: map[string]bool{}, names: map[string]fileKey{}, files: map[fileKey]*linkedFile{},
		dirAttrs: map[string]uint32{}, canonical: map[string]string{}}
	if rel, err := filepath.Rel(root, skip); skip != "" && err == nil && filepath.IsLocal(rel) {
		t.skipRel = filepath.ToSlash(rel)
	}
	if err := onLocalDrive(root); err != nil {
		return nil, err
	}
	var err error
	if t.rootW, err = openWatch(root, true, notifyFilter); err != nil {
		return nil, err
	}
	if t.rootID, err = keyOf(t.rootW.h); err != nil {
		t.rootW.close()
		return nil, fmt.Errorf("%s: %w", root, err)
	}
	if t.cookieW, err = openWatch(cookie, false, windows.FILE_NOTIFY_CHANGE_FILE_NAME); err != nil {
		t.rootW.close()
		return nil, err
	}
	if t.quit, err = windows.CreateEvent(nil, 1, 0, nil); err != nil {
		t.rootW.close()
		t.cookieW.close()
		return nil, fmt.Errorf("watch %s: %w", root, err)
	}
	started := make(chan error, 1)
	go t.loop(started)
	if err := <-started; err != nil {
		t.closeHandles()
		return nil, err
	}
	// The watch is in place: whatever changes while the tree is read is reported.
	t.mu.Lock()
	err = t.look("", nil)
	t.unsure = false // the read saw every name in the tree: those a file lacks are outside it
	t.mu.Unlock()
	if err != nil {
		t.close()
		return nil, err
	}
	return t, nil
}

// onLocalDrive refuses a root on a network drive: the server reports changes other machines make as
// it chooses (SMB caps what it sends, some servers send nothing), and the watcher cannot tell.
func onLocalDrive(root string) error {
	p, err := windows.UTF16PtrFromString(root)
	if err != nil {
		return fmt.Errorf("watch %s: %w", root, err)
	}
	vol := make([]uint16, windows.MAX_PATH+1)
	if err := windows.GetVolumePathName(p, &vol[0], uint32(len(vol))); err != nil {
		return fmt.Errorf("find the volume of %s: %w", root, err)
	}
	if windows.GetDriveType(&vol[0]) == windows.DRIVE_REMOTE {
		return fmt.Errorf("%s is on a network drive (%s), whose changes made elsewhere the watcher cannot be sure to see: checkpoints walk the tree", root, windows.UTF16ToString(vol))
	}
	return nil
}

// read does nothing: the reader started in newTree, before the tree was read, so that nothing
// changed meanwhile is missed.
func (t *tree) read() {}

// loop issues both watches' reads and records what they return until close. It runs on one
// thread that it keeps: a read's completion reaches the thread that issued it, in the order the
// changes happened, and when both watches have completed the wait returns the root's first. So
// once the cookie's change is seen, every change to the workspace made before it has been
// recorded (server.sync). started gets the first reads' outcome.
func (t *tree) loop(started chan<- error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer close(t.done)
	if err := t.rootW.issue(); err != nil {
		started <- fmt.Errorf("watch %s: %w", t.root, err)
		return
	}
	if err := t.cookieW.issue(); err != nil {
		t.rootW.stop()
		started <- fmt.Errorf("watch %s: %w", t.cookie, err)
		return
	}
	started <- nil
	defer t.cookieW.stop()
	defer t.rootW.stop()
	evs := []windows.Handle{t.rootW.ov.HEvent, t.cookieW.ov.HEvent, t.quit}
	for {
		i, err := windows.WaitForMultipleObjects(evs, false, windows.INFINITE)
		if err != nil {
			t.fail(fmt.Sprintf("the watcher's wait failed: %v", err))
			return
		}
		switch i - windows.WAIT_OBJECT_0 {
		case 0:
			if !t.rootRead() {
				return
			}
		case 1:
			if !t.cookieRead() {
				return
			}
		default:
			return
		}
	}
}

// fail records why the watch cannot be trusted any more.
func (t *tree) fail(why string) {
	t.mu.Lock()
	if t.broken == "" {
		t.broken = why
	}
	t.mu.Unlock()
}

// rootRead records a completed read of the root's watch and starts the next; false once the
// watch has ended (the root removed or moved, a failure: the watcher refuses then).
func (t *tree) rootRead() bool {
	n, err := t.rootW.result()
	t.mu.Lock()
	switch {
	case errors.Is(err, windows.ERROR_NOTIFY_ENUM_DIR) || err == nil && n == 0:
		if t.broken == "" {
			t.broken = "the system's buffer of changes overflowed (changes were lost)"
		}
	case err != nil:
		if t.rootMoved() != "" || errors.Is(err, windows.ERROR_ACCESS_DENIED) {
			t.gone = true // a folder being removed fails its watch so
		}
		if t.broken == "" {
			t.broken = fmt.Sprintf("the watch of %s ended: %v", t.root, err)
		}
		t.mu.Unlock()
		return false
	default:
		changes(t.rootW.buf[:n], t.event)
	}
	t.mu.Unlock()
	if err := t.rootW.issue(); err != nil {
		t.fail(fmt.Sprintf("the watch of %s ended: %v", t.root, err))
		return false
	}
	return true
}

// cookieRead wakes the waiters for the cookies made, and starts the next read.
func (t *tree) cookieRead() bool {
	n, err := t.cookieW.result()
	if err != nil && !errors.Is(err, windows.ERROR_NOTIFY_ENUM_DIR) {
		t.fail(fmt.Sprintf("the watch of %s ended: %v", t.cookie, err))
		return false
	}
	t.mu.Lock()
	changes(t.cookieW.buf[:n], func(action uint32, name string) {
		if c, ok := t.waiters[name]; ok && action == windows.FILE_ACTION_ADDED {
			close(c)
			delete(t.waiters, name)
		}
	})
	t.mu.Unlock() // a lost cookie's waiter gives up after catchUp: that answer is refused
	if err := t.cookieW.issue(); err != nil {
		t.fail(fmt.Sprintf("the watch of %s ended: %v", t.cookie, err))
		return false
	}
	return true
}

// catchUp returns once every change made before it was called has been recorded: through
// cookie, the server's cookie round trip, also for a question from this process (no drain of
// the system's buffer tells that it is empty).
func (t *tree) catchUp(local bool, cookie func() error) error { return cookie() }

// event records one reported change of name, relative to the root. Called with mu held.
func (t *tree) event(action uint32, name string) {
	rel := filepath.ToSlash(name)
	if t.skipRel != "" && (rel == t.skipRel || strings.HasPrefix(rel, t.skipRel+"/")) {
		return
	}
	gone := action == windows.FILE_ACTION_REMOVED || action == windows.FILE_ACTION_RENAMED_OLD_NAME
	p, exists, widened, err := t.resolve(rel, gone)
	switch {
	case err != nil:
		t.broken = err.Error()
		return
	case widened: // its folder, read whole: what the watcher knew under it is learned again
		t.mark(p)
		t.forget(p)
		if err := t.look(p, nil); err != nil {
			t.broken = err.Error()
		}
		return
	case gone:
		clear(t.canonical) // it may have been a folder: names under it are others' now
		if _, dir := t.dirAttrs[p]; dir && t.movesLost && action == windows.FILE_ACTION_RENAMED_OLD_NAME {
			t.broken = fmt.Sprintf("folder %s was moved, and under Wine the watch no longer sees into a moved folder (it reports its changes under the old name, or not at all): checkpoints walk the tree until a new watcher starts", p)
		}
		t.mark(p)
		t.forget(p)
		return
	case !exists:
		t.mark(p) // gone again: its removal is reported too
		return
	}
	if action == windows.FILE_ACTION_MODIFIED {
		if old, ok := t.dirAttrs[p]; ok {
			if attrs, err := attributes(t.full(p)); err == nil && attrs == old {
				return // a folder's entries changed, not the folder: they are reported themselves
			}
		}
	}
	t.mark(p)
	if err := t.look(p, nil); err != nil {
		t.broken = err.Error()
	}
}

// full is rel's path.
func (t *tree) full(rel string) string {
	if rel == "" {
		return t.root
	}
	return filepath.Join(t.root, filepath.FromSlash(rel))
}

func (t *tree) close() error {
	windows.SetEvent(t.quit)
	<-t.done
	t.closeHandles()
	return nil
}

// closeHandles closes what newTree opened, once no read is pending.
func (t *tree) closeHandles() {
	t.rootW.close()
	t.cookieW.close()
	windows.CloseHandle(t.quit)
}

// watched is how many folders the watch covers.
func (t *tree) watched() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.dirAttrs)
}

// since answers r, a question for the changes after token tok of watcher id: the paths changed
// after it, with every reparse point below the root and every name of a file with more than one
// link (which the watch cannot vouch for), and the token of now; or why it cannot answer (with
// no token when the watcher cannot be trusted any more: it then stops). Called once the cookie
// round trip has shown every earlier change was recorded.
func (t *tree) since(id, tok string, r *Reply) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.broken == "" {
		t.broken = t.rootMoved()
	}
	if t.broken == "" && t.unsure {
		if err := t.relearn(); err != nil {
			t.broken = err.Error()
		}
	}
	if t.broken != "" {
		r.Refused = t.broken
		return
	}
	r.Token = t.token(id)
	n, refused := t.check(id, tok)
	if r.Refused = refused; refused != "" {
		return
	}
	named := map[string]bool{}
	for p := range t.after(n) {
		named[p] = true
		r.Paths = append(r.Paths, p)
	}
	for p := range t.names {
		r.Linked++
		if !named[p] {
			r.Paths = append(r.Paths, p)
		}
	}
	for p := range t.special {
		r.Mounts = append(r.Mounts, p)
		if !named[p] {
			r.Paths = append(r.Paths, p)
		}
	}
	slices.Sort(r.Mounts)
}

// rootMoved says why the root's path no longer names the folder the watcher watches ("" while
// it does): the folder was moved (or a folder above it), removed or replaced.
func (t *tree) rootMoved() string {
	k, err := keyOfPath(t.root)
	if err != nil || k != t.rootID || deletePending(t.rootW.h) {
		return fmt.Sprintf("%s is not the folder this watcher watches any more (it was moved, removed or replaced): checkpoints walk the tree until a watcher of the folder there starts", t.root)
	}
	return ""
}

// deletePending reports whether the folder h is open on was removed while handles to it stay
// open (it goes with the last one; the watcher's must not keep it).
func deletePending(h windows.Handle) bool {
	var fi struct { // FILE_STANDARD_INFO
		allocationSize, endOfFile int64
		numberOfLinks             uint32
		deletePending, directory  byte
	}
	err := windows.GetFileInformationByHandleEx(h, windows.FileStandardInfo, (*byte)(unsafe.Pointer(&fi)), uint32(unsafe.Sizeof(fi)))
	return err == nil && fi.deletePending != 0
}

// ownMountNS: Windows has no mount namespaces; every process sees the same volumes.
func ownMountNS() string { return "" }

// fileKey tells one file from another: its volume and file index.
type fileKey struct{ volume, high, low uint32 }

// keyOf is the key of the file h is open on, with its link count.
func keyOf(h windows.Handle) (fileKey, error) {
	k, _, err := infoOf(h)
	return k, err
}

func infoOf(h windows.Handle) (fileKey, uint32, error) {
	var fi windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &fi); err != nil {
		return fileKey{}, 0, err
	}
	return fileKey{fi.VolumeSerialNumber, fi.FileIndexHigh, fi.FileIndexLow}, fi.NumberOfLinks, nil
}

// keyOfPath is the key and link count of what path names itself (a reparse point is not
// followed), opened to read its attributes only and sharing everything.
func keyOfPath(path string) (fileKey, error) {
	k, _, err := linksOf(path)
	return k, err
}

func linksOf(path string) (fileKey, uint32, error) {
	p, err := windows.UTF16PtrFromString(winpath.Long(path))
	if err != nil {
		return fileKey{}, 0, err
	}
	h, err := windows.CreateFile(p, windows.FILE_READ_ATTRIBUTES,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil, windows.OPEN_EXISTING,
		windows.FILE_FLAG_BACKUP_SEMANTICS|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return fileKey{}, 0, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer windows.CloseHandle(h)
	return infoOf(h)
}
