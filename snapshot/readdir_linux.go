package snapshot

import (
	"sync"
	"syscall"
)

// direntBuf is getdents64's buffer: 32 KiB reads a typical directory in one call (os.File's
// 8 KiB takes two or more), and pooling it keeps a walk from allocating one per directory.
var direntBuf = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// openDir opens the directory full without following a final symlink and lists its names
// ("." and ".." left out). It returns the open descriptor for lstatAt and readlinkAt, which the
// caller closes. Raw system calls, not os.File: an os.File of a directory costs four fcntl and
// a failed epoll_ctl on every open, which at tens of thousands of directories is measurable
// next to the lstat walk itself.
func openDir(full string) (fd int, names []string, err error) {
	for {
		fd, err = syscall.Open(full, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return -1, nil, err
	}
	bp := direntBuf.Get().(*[]byte)
	defer direntBuf.Put(bp)
	for {
		n, err := syscall.ReadDirent(fd, *bp)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			syscall.Close(fd)
			return -1, nil, err
		}
		if n <= 0 {
			return fd, names, nil
		}
		_, _, names = syscall.ParseDirent((*bp)[:n], -1, names)
	}
}

func closeDir(fd int) { syscall.Close(fd) }
