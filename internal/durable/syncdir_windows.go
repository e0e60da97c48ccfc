package durable

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unsafe"
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
// disk (MOVEFILE_WRITE_THROUGH): os.Rename does not ask for that.
func rename(oldpath, newpath string) error {
	from, err := syscall.UTF16PtrFromString(fixLongPath(oldpath))
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	to, err := syscall.UTF16PtrFromString(fixLongPath(newpath))
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	r, _, err := procMoveFileExW.Call(uintptr(unsafe.Pointer(from)), uintptr(unsafe.Pointer(to)), movefileReplaceExisting|movefileWriteThrough)
	if r == 0 {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	return nil
}

// fixLongPath gives MoveFileExW a path it takes beyond MAX_PATH (260): the \\?\ form, which
// must be absolute and clean. os does the same for its own calls.
func fixLongPath(p string) string {
	if len(p) < 248 || strings.HasPrefix(p, `\\?\`) {
		return p
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	if strings.HasPrefix(abs, `\\`) {
		return `\\?\UNC\` + abs[2:]
	}
	return `\\?\` + abs
}
