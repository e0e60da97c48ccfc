package regular

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
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
