package platform

import (
	"bytes"
	"encoding/binary"
	"sync"
	"syscall"
	"unsafe"
)

// direntBuf is getdents64's buffer: 32 KiB reads a typical directory in one call (os.File's
// 8 KiB takes two or more), and pooling it keeps a walk from allocating one per directory.
var direntBuf = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// OpenDir opens the directory full without following a final symlink and lists its entries
// ("." and ".." left out) as prefix+name, in no particular order. It returns the open descriptor
// for LstatAt and ReadlinkAt, which the caller closes. Not os.File: an os.File of a directory
// costs four fcntl and a failed epoll_ctl on every open, which at tens of thousands of
// directories is measurable next to the lstat walk itself. Raw system calls, as LstatAt's (see
// there why). The paths are substrings of one string: one allocation per directory, not one per
// name and another per path.
func OpenDir(full, prefix string) (int, []string, error) {
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
	var arena []byte // every path, back to back
	var ends []int
	for {
		buf := *bp
		n, _, e := syscall.RawSyscall(syscall.SYS_GETDENTS64, fd, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			CloseDir(int(fd))
			return -1, nil, e
		}
		if n == 0 {
			break
		}
		if arena == nil {
			// Sized from the first read, which holds the whole directory but for a large one.
			count, names := direntSizes(buf[:n])
			arena = make([]byte, 0, names+count*len(prefix))
			ends = make([]int, 0, count)
		}
		arena, ends = appendDirents(arena, ends, buf[:n], prefix)
	}
	// The paths point into arena, which nothing writes to after this.
	all := unsafe.String(unsafe.SliceData(arena), len(arena))
	paths := make([]string, len(ends))
	start := 0
	for i, end := range ends {
		paths[i] = all[start:end]
		start = end
	}
	return int(fd), paths, nil
}

// direntSizes returns how many linux_dirent64 records buf holds (see appendDirents) and a bound
// on the bytes of their names (each record's length past its fixed fields).
func direntSizes(buf []byte) (count, names int) {
	for len(buf) >= 19 {
		reclen := int(binary.NativeEndian.Uint16(buf[16:]))
		if reclen < 19 || reclen > len(buf) {
			break
		}
		count++
		names += reclen - 19
		buf = buf[reclen:]
	}
	return count, names
}

// appendDirents appends prefix+name of each linux_dirent64 record in buf to arena, and where
// each ends to ends. A record: d_ino (8 bytes), d_off (8), d_reclen (2), d_type (1), d_name
// (NUL-terminated, padded to d_reclen).
func appendDirents(arena []byte, ends []int, buf []byte, prefix string) ([]byte, []int) {
	for len(buf) >= 19 {
		reclen := int(binary.NativeEndian.Uint16(buf[16:]))
		if reclen < 19 || reclen > len(buf) {
			break
		}
		ino := binary.NativeEndian.Uint64(buf)
		name := buf[19:reclen]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		buf = buf[reclen:]
		if ino == 0 || len(name) == 0 || string(name) == "." || string(name) == ".." {
			continue // a deleted entry (as syscall.ParseDirent skips), or the dot entries
		}
		arena = append(arena, prefix...)
		arena = append(arena, name...)
		ends = append(ends, len(arena))
	}
	return arena, ends
}

// CloseDir closes a descriptor OpenDir returned.
func CloseDir(fd int) { syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(fd), 0, 0) }

const atFDCWD = ^uintptr(99) // AT_FDCWD, -100
