package regular

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular is matched (errors.Is) by every *NotRegularError.
var ErrNotRegular = errors.New("not a regular file")

// NotRegularError says that Path is not a regular file, and what it is instead.
type NotRegularError struct {
	Path  string
	Type  fs.FileMode // the type bits found: fs.ModeNamedPipe, fs.ModeDir, fs.ModeSymlink, ...
	Input bool        // Path is a file a person named (OpenInput, ReadInput), not a state file
}

func (e *NotRegularError) Error() string {
	what := "only regular files belong there: move it aside"
	if e.Input {
		what = "give a regular file (save the content to one first)"
	}
	return fmt.Sprintf("%s is %s, not a regular file; %s", e.Path, describe(e.Type), what)
}

// Is makes errors.Is(err, ErrNotRegular) true.
func (e *NotRegularError) Is(target error) bool { return target == ErrNotRegular }

// describe names a file type for a person.
func describe(t fs.FileMode) string {
	switch {
	case t&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeSymlink != 0:
		return "a symlink"
	case t&fs.ModeDir != 0:
		return "a directory"
	case t&fs.ModeCharDevice != 0:
		return "a character device"
	case t&fs.ModeDevice != 0:
		return "a block device"
	}
	return fmt.Sprintf("of type %v", t.Type())
}

// Open opens the state file name for reading, like os.Open, but fails at once unless it is a
// regular file (a symlink is refused too).
func Open(name string) (*os.File, error) {
	f, _, err := open(name, os.O_RDONLY, 0, false)
	return f, err
}

// OpenFile is os.OpenFile for a state file: with any flags (O_RDWR, O_CREATE, O_APPEND, ...),
// it fails at once unless name is, or is created as, a regular file (a symlink is refused too).
func OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	f, _, err := open(name, flag, perm, false)
	return f, err
}

// OpenInput opens for reading a file a person named: symlinks are followed, and what name leads
// to must be a regular file.
func OpenInput(name string) (*os.File, error) {
	f, _, err := open(name, os.O_RDONLY, 0, true)
	return f, err
}

// ReadFile is os.ReadFile for a state file (see Open).
func ReadFile(name string) ([]byte, error) {
	return readFile(open(name, os.O_RDONLY, 0, false))
}

// ReadInput is os.ReadFile for a file a person named (see OpenInput).
func ReadInput(name string) ([]byte, error) { return readFile(open(name, os.O_RDONLY, 0, true)) }

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

// readFile reads all of f and closes it, starting with room for its size as os.ReadFile does.
func readFile(f *os.File, size int64, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	defer f.Close()
	capacity := 512
	if size > 0 && int64(int(size)) == size {
		capacity += int(size)
	}
	data := make([]byte, 0, capacity)
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return data, err
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
	}
}
