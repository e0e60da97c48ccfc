package platform

import (
	"fmt"
	"io/fs"
	"os"
	"sync"
	"syscall"

	"github.com/agent-rewind/rewind/internal/winpath"
)

// openFiles keeps the os.File of each folder OpenDir returned, so that CloseDir closes it: the
// open handle keeps the folder from being removed or renamed while the walk stats its entries.
var openFiles sync.Map // handle -> *os.File

// OpenDir opens the folder full without following a final reparse point (a symlink or junction
// in its place is refused, as O_NOFOLLOW refuses one on Unix) and lists its entries as
// prefix+name. It returns the open handle for LstatAt and ReadlinkAt, which the caller closes.
func OpenDir(full, prefix string) (int, []string, error) {
	p, err := syscall.UTF16PtrFromString(winpath.Long(full))
	if err != nil {
		return -1, nil, &fs.PathError{Op: "open", Path: full, Err: err}
	}
	const fileListDirectory = 0x1
	share := uint32(syscall.FILE_SHARE_READ | syscall.FILE_SHARE_WRITE | syscall.FILE_SHARE_DELETE)
	flags := uint32(syscall.FILE_FLAG_BACKUP_SEMANTICS | syscall.FILE_FLAG_OPEN_REPARSE_POINT)
	h, err := syscall.CreateFile(p, fileListDirectory|fileReadAttributes|syscall.SYNCHRONIZE, share, nil, syscall.OPEN_EXISTING, flags, 0)
	if err != nil {
		return -1, nil, &fs.PathError{Op: "open", Path: full, Err: err}
	}
	st, err := fromHandle(h)
	if err != nil {
		syscall.CloseHandle(h)
		return -1, nil, &fs.PathError{Op: "stat", Path: full, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
		syscall.CloseHandle(h)
		return -1, nil, &fs.PathError{Op: "open", Path: full, Err: fmt.Errorf("not a folder but %s: not followed", kindOf(st.Mode))}
	}
	f := os.NewFile(uintptr(h), full)
	names, err := f.Readdirnames(-1)
	if err != nil {
		f.Close()
		return -1, nil, err
	}
	for i, n := range names {
		names[i] = prefix + n
	}
	openFiles.Store(int(h), f)
	return int(h), names, nil
}

// kindOf names a non-folder type for OpenDir's refusal.
func kindOf(mode uint32) string {
	switch mode & syscall.S_IFMT {
	case syscall.S_IFLNK:
		return "a symlink"
	case typeReparse:
		return "a reparse point (a junction, a mount point or a cloud file)"
	case syscall.S_IFREG:
		return "a file"
	}
	return "a special file"
}

// CloseDir closes a handle OpenDir returned.
func CloseDir(fd int) {
	if f, ok := openFiles.LoadAndDelete(fd); ok {
		f.(*os.File).Close()
	}
}
