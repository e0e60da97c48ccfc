package snapshot

import (
	"sync"
	"syscall"
	"unsafe"
)

// direntBuf is getdents64's buffer: 32 KiB reads a typical directory in one call (os.File's
// 8 KiB takes two or more), and pooling it keeps a walk from allocating one per directory.
var direntBuf = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// openDir opens the directory full without following a final symlink and lists its names
// ("." and ".." left out). It returns the open descriptor for lstatAt and readlinkAt, which the
// caller closes. Not os.File: an os.File of a directory costs four fcntl and a failed epoll_ctl
// on every open, which at tens of thousands of directories is measurable next to the lstat walk
// itself. Raw system calls, as lstatAt's (see there why).
func openDir(full string) (int, []string, error) {
	p, err := syscall.BytePtrFromString(full)
	if err != nil {
		return -1, nil, err
	}
	var fd uintptr
	for {
		var e syscall.Errno
		fd, _, e = syscall.RawSyscall6(syscall.SYS_OPENAT, atFDCWD, uintptr(unsafe.Pointer(p)),
			syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0, 0, 0)
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			return -1, nil, e
		}
		break
	}
	bp := direntBuf.Get().(*[]byte)
	defer direntBuf.Put(bp)
	var names []string
	for {
		buf := *bp
		n, _, e := syscall.RawSyscall(syscall.SYS_GETDENTS64, fd, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			closeDir(int(fd))
			return -1, nil, e
		}
		if n == 0 {
			return int(fd), names, nil
		}
		_, _, names = syscall.ParseDirent(buf[:n], -1, names)
	}
}

func closeDir(fd int) { syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(fd), 0, 0) }

const atFDCWD = ^uintptr(99) // AT_FDCWD, -100
