package regular

import (
	"io/fs"
	"os"
	"syscall"

	"github.com/agent-rewind/rewind/internal/winpath"
)

// open opens name with flag and perm and returns it with its size, or fails unless it is a
// regular file. Windows has no FIFOs among files (its pipes live under \\.\pipe\), so no open
// can block; a state file (input false) is opened as the reparse point itself, so a symlink or
// junction in its place reads as what it is instead of being followed.
//
// Every handle shares reading, writing and deletion: os.Open does not share deletion, and on
// Windows a file open without it cannot be renamed over or removed, so every reader of a state
// file would make the writer that replaces it durably (a rename over it) fail with "access
// denied".
func open(name string, flag int, perm fs.FileMode, input bool) (*os.File, int64, error) {
	h, err := createFile(name, flag, perm, input)
	if err != nil {
		stat := os.Stat
		if !input {
			stat = os.Lstat
		}
		if fi, serr := stat(name); serr == nil && !fi.Mode().IsRegular() {
			return nil, 0, &NotRegularError{Path: name, Type: fi.Mode().Type(), Input: input}
		}
		return nil, 0, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	f := os.NewFile(uintptr(h), name)
	var info syscall.ByHandleFileInformation
	if err := syscall.GetFileInformationByHandle(h, &info); err != nil {
		f.Close()
		return nil, 0, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	if t := fileType(info.FileAttributes); t != 0 {
		f.Close()
		return nil, 0, &NotRegularError{Path: name, Type: t, Input: input}
	}
	size := int64(info.FileSizeHigh)<<32 | int64(info.FileSizeLow)
	if flag&os.O_TRUNC != 0 && size > 0 {
		if err := f.Truncate(0); err != nil {
			f.Close()
			return nil, 0, err
		}
		size = 0
	}
	return f, size, nil
}

// fileType names what a handle holds when it is not a regular file: a reparse point (opened
// as itself) reads as a symlink, a folder as a folder.
func fileType(attrs uint32) fs.FileMode {
	switch {
	case attrs&syscall.FILE_ATTRIBUTE_REPARSE_POINT != 0:
		return fs.ModeSymlink
	case attrs&syscall.FILE_ATTRIBUTE_DIRECTORY != 0:
		return fs.ModeDir
	}
	return 0
}

// createFile is syscall.Open's mapping of flags to CreateFile, with deletion shared and, for
// a state file, the reparse point opened as itself.
func createFile(name string, flag int, perm fs.FileMode, input bool) (syscall.Handle, error) {
	if name == "" {
		return syscall.InvalidHandle, syscall.ERROR_FILE_NOT_FOUND
	}
	p, err := syscall.UTF16PtrFromString(winpath.Long(name))
	if err != nil {
		return syscall.InvalidHandle, err
	}
	var access uint32
	switch flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR) {
	case os.O_RDONLY:
		access = syscall.GENERIC_READ
	case os.O_WRONLY:
		access = syscall.GENERIC_WRITE
	case os.O_RDWR:
		access = syscall.GENERIC_READ | syscall.GENERIC_WRITE
	}
	if flag&os.O_CREATE != 0 {
		access |= syscall.GENERIC_WRITE
	}
	if flag&os.O_APPEND != 0 {
		// As syscall.Open: without FILE_WRITE_DATA every write goes to the end.
		if flag&os.O_TRUNC == 0 {
			access &^= syscall.GENERIC_WRITE
		}
		access |= syscall.FILE_APPEND_DATA | syscall.FILE_WRITE_ATTRIBUTES | fileWriteEA | syscall.STANDARD_RIGHTS_WRITE | syscall.SYNCHRONIZE
	}
	attrs := uint32(syscall.FILE_ATTRIBUTE_NORMAL)
	if perm&0o200 == 0 && flag&os.O_CREATE != 0 {
		attrs = syscall.FILE_ATTRIBUTE_READONLY
	}
	if flag&(os.O_WRONLY|os.O_RDWR) == 0 {
		attrs |= syscall.FILE_FLAG_BACKUP_SEMANTICS // a folder opens for reading, to be named as one
	}
	if !input {
		attrs |= syscall.FILE_FLAG_OPEN_REPARSE_POINT
	}
	var create uint32
	switch {
	case flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL:
		create = syscall.CREATE_NEW
	case flag&os.O_CREATE != 0:
		create = syscall.OPEN_ALWAYS
	default:
		create = syscall.OPEN_EXISTING
	}
	share := uint32(syscall.FILE_SHARE_READ | syscall.FILE_SHARE_WRITE | syscall.FILE_SHARE_DELETE)
	h := syscall.InvalidHandle
	err = winpath.Retry(func() (err error) {
		h, err = syscall.CreateFile(p, access, share, nil, create, attrs, 0)
		if err == syscall.ERROR_ACCESS_DENIED {
			// A folder opened for writing: nothing that waiting changes.
			if a, aerr := syscall.GetFileAttributes(p); aerr == nil && a&syscall.FILE_ATTRIBUTE_DIRECTORY != 0 {
				return syscall.EISDIR
			}
		}
		return err
	})
	return h, err
}

const fileWriteEA = 0x00000010
