package platform

import (
	"os"
	"sync"
	"syscall"
)

// openFiles keeps the os.File of each directory OpenDir returned, so that CloseDir closes it
// (its descriptor must stay valid while the walk stats the entries).
var openFiles sync.Map // fd -> *os.File

// OpenDir opens the directory full without following a final symlink and lists its entries as
// prefix+name. It returns the open descriptor for LstatAt and ReadlinkAt, which the caller closes.
func OpenDir(full, prefix string) (int, []string, error) {
	f, err := os.OpenFile(full, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return -1, nil, err
	}
	names, err := f.Readdirnames(-1)
	if err != nil {
		f.Close()
		return -1, nil, err
	}
	for i, n := range names {
		names[i] = prefix + n
	}
	fd := int(f.Fd())
	openFiles.Store(fd, f)
	return fd, names, nil
}

// CloseDir closes a descriptor OpenDir returned.
func CloseDir(fd int) {
	if f, ok := openFiles.LoadAndDelete(fd); ok {
		f.(*os.File).Close()
	}
}
