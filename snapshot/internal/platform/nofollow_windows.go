package platform

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/agent-rewind/rewind/internal/winpath"
)

// errReparse is the refusal to open a reparse point as if it were a file: a symlink, a
// junction, a cloud placeholder (whose data would be fetched). It is ELOOP to errors.Is, as
// O_NOFOLLOW's refusal is on Unix, so callers test one error on every system.
var errReparse = fmt.Errorf("a reparse point (symlink, junction or cloud placeholder), not followed: %w", syscall.ELOOP)

// OpenNoFollow opens the file or folder name for reading as itself, refusing a reparse point
// in its place (errReparse): it opens the name with FILE_FLAG_OPEN_REPARSE_POINT, so nothing is
// followed and a cloud file is not hydrated, and checks the handle's type. It shares reading,
// writing and deleting, so another process's writes are neither blocked nor waited for.
func OpenNoFollow(name string) (*os.File, error) {
	p, err := syscall.UTF16PtrFromString(winpath.Long(name))
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	share := uint32(syscall.FILE_SHARE_READ | syscall.FILE_SHARE_WRITE | syscall.FILE_SHARE_DELETE)
	flags := uint32(syscall.FILE_FLAG_BACKUP_SEMANTICS | syscall.FILE_FLAG_OPEN_REPARSE_POINT)
	h, err := syscall.CreateFile(p, syscall.GENERIC_READ, share, nil, syscall.OPEN_EXISTING, flags, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	st, err := fromHandle(h)
	if err == nil && !st.IsRegular() && !st.IsDir() {
		err = errReparse
	}
	if err != nil {
		syscall.CloseHandle(h)
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(h), name), nil
}

// OpenAppend opens the file name for appending, creating it with mode perm when missing, and
// refuses a reparse point in its place (errReparse). Go's own open keeps the append mode's
// bookkeeping, so the file is opened by it and then checked: the name must be a regular file
// and the very one opened (the same file ID), else a link was there or was swapped in.
func OpenAppend(name string, perm fs.FileMode) (*os.File, error) {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, perm)
	if err != nil {
		return nil, err
	}
	if err := sameFile(f, name); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// noBlock is nothing on Windows: a folder holds no FIFOs.
const noBlock = 0
