package durable

import (
	"os"
	"path/filepath"
	"syscall"
	"unsafe"

	"github.com/agent-rewind/rewind/internal/winpath"
)

// SyncDir makes the names created, renamed or removed in dir durable. On Windows a folder
// cannot be flushed (FlushFileBuffers wants a handle opened for writing, which a folder's is
// not); NTFS logs its names itself, and rename asks for the move to be written through before
// it returns, so there is nothing left to do here but check that dir is a folder.
func SyncDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return &os.PathError{Op: "sync directory", Path: dir, Err: syscall.ENOTDIR}
	}
	return nil
}

var procMoveFileExW = syscall.NewLazyDLL("kernel32.dll").NewProc("MoveFileExW")

const (
	movefileReplaceExisting = 0x1
	movefileWriteThrough    = 0x8
)

// rename puts oldpath at newpath, replacing what was there, and returns once the move is on
// disk (MOVEFILE_WRITE_THROUGH): os.Rename does not ask for that. A target a reader holds open
// is tried again briefly (winpath.Retry).
func rename(oldpath, newpath string) error {
	from, err := syscall.UTF16PtrFromString(winpath.Long(oldpath))
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	to, err := syscall.UTF16PtrFromString(winpath.Long(newpath))
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	err = winpath.Retry(func() error {
		r, _, err := procMoveFileExW.Call(uintptr(unsafe.Pointer(from)), uintptr(unsafe.Pointer(to)), movefileReplaceExisting|movefileWriteThrough)
		if r == 0 {
			return err
		}
		return nil
	})
	if err != nil && filepath.Dir(oldpath) == filepath.Dir(newpath) {
		// Still refused: a reader holds the target open for longer. MoveFileEx cannot replace
		// an open file; a rename with POSIX semantics (Windows 10 1607 and later, on NTFS; what
		// os.Root's Rename asks for) can when every handle shares deletion, as regular's do. It
		// has no write-through: NTFS's log makes the new name durable within seconds.
		if root, rerr := os.OpenRoot(filepath.Dir(newpath)); rerr == nil {
			if root.Rename(filepath.Base(oldpath), filepath.Base(newpath)) == nil {
				err = nil
			}
			root.Close()
		}
	}
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	return nil
}
