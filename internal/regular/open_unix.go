//go:build unix

package regular

import (
	"io/fs"
	"os"
	"syscall"
)

// open opens name with flag and perm and returns it with its size, or fails unless it is a
// regular file. A state file (input false) is opened with O_NOFOLLOW.
func open(name string, flag int, perm fs.FileMode, input bool) (*os.File, int64, error) {
	if !input {
		flag |= syscall.O_NOFOLLOW
	}
	var fd int
	var err error
	for {
		fd, err = syscall.Open(name, flag|syscall.O_NONBLOCK|syscall.O_NOCTTY|syscall.O_CLOEXEC, uint32(perm.Perm()))
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		// A symlink under O_NOFOLLOW (ELOOP), a FIFO opened for writing with no reader or a
		// socket (ENXIO, EOPNOTSUPP), a directory opened for writing (EISDIR): say what it is.
		stat := os.Stat
		if !input {
			stat = os.Lstat
		}
		if fi, serr := stat(name); serr == nil && !fi.Mode().IsRegular() {
			return nil, 0, &NotRegularError{Path: name, Type: fi.Mode().Type(), Input: input}
		}
		return nil, 0, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	var st syscall.Stat_t
	for {
		err = syscall.Fstat(fd, &st)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		syscall.Close(fd)
		return nil, 0, &fs.PathError{Op: "fstat", Path: name, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		syscall.Close(fd)
		return nil, 0, &NotRegularError{Path: name, Type: fileType(uint32(st.Mode)), Input: input}
	}
	if err := syscall.SetNonblock(fd, false); err != nil {
		syscall.Close(fd)
		return nil, 0, &fs.PathError{Op: "fcntl", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), name), st.Size, nil
}

// fileType converts the S_IFMT bits of a stat mode to fs.FileMode type bits.
func fileType(mode uint32) fs.FileMode {
	switch mode & syscall.S_IFMT {
	case syscall.S_IFIFO:
		return fs.ModeNamedPipe
	case syscall.S_IFSOCK:
		return fs.ModeSocket
	case syscall.S_IFLNK:
		return fs.ModeSymlink
	case syscall.S_IFDIR:
		return fs.ModeDir
	case syscall.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFBLK:
		return fs.ModeDevice
	}
	return fs.ModeIrregular
}
