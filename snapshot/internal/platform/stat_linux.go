package platform

import (
	"os"
	"strings"
	"syscall"
	"unsafe"
)

func fromStat(st *syscall.Stat_t) Stat {
	return Stat{
		Mode:  st.Mode,
		Size:  int64(st.Size),
		Mtime: int64(st.Mtim.Sec)*1e9 + int64(st.Mtim.Nsec),
		Ctime: int64(st.Ctim.Sec)*1e9 + int64(st.Ctim.Nsec),
		Ino:   uint64(st.Ino),
	}
}

// LstatAt stats name in the directory open as dirfd (whose path is dir) without following a
// final symlink: one syscall and no path walk, which keeps a no-change checkpoint close to a bare
// stat walk. It is a raw system call, which does not tell the Go scheduler: an lstat of a
// directory entry the walk just listed takes about a microsecond, and telling the scheduler
// around each of tens of thousands of them made its monitor thread wake every 20µs and hand
// processors between threads (thousands of nanosleep and futex calls per checkpoint, more time
// than the lstat calls themselves). A slow lstat (a cold disk) holds one of the walk's workers'
// processors meanwhile, which is all the walk would do with it anyway.
func LstatAt(dirfd int, dir, name string) (Stat, error) {
	if sysFstatat == 0 {
		return Lstat(dir + "/" + name)
	}
	// A name read from a directory fits in 256 bytes with its NUL: pass it from the stack rather
	// than allocating a C string per entry.
	var buf [256]byte
	var p *byte
	if len(name) < len(buf) && strings.IndexByte(name, 0) < 0 {
		copy(buf[:], name)
		p = &buf[0]
	} else {
		var err error
		if p, err = syscall.BytePtrFromString(name); err != nil {
			return Stat{}, err
		}
	}
	var st syscall.Stat_t
	for {
		_, _, e := syscall.RawSyscall6(sysFstatat, uintptr(dirfd), uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(&st)), uintptr(atSymlinkNofollow), 0, 0)
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			return Stat{}, e
		}
		return fromStat(&st), nil
	}
}

const atSymlinkNofollow = 0x100

// ReadlinkAt reads the target of the symlink name in the directory open as dirfd.
func ReadlinkAt(dirfd int, _, name string) (string, error) {
	p, err := syscall.BytePtrFromString(name)
	if err != nil {
		return "", err
	}
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, _, e := syscall.Syscall6(syscall.SYS_READLINKAT, uintptr(dirfd), uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(&buf[0])), uintptr(size), 0, 0)
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			return "", e
		}
		if int(n) < size {
			return string(buf[:n]), nil
		}
	}
}

// SyncFS flushes the whole filesystem holding dir (syncfs(2)): one flush makes a batch of
// unsynced writes durable, instead of one fsync per file.
func SyncFS(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if sysSyncfs == 0 {
		syscall.Sync() // no syncfs number known for this architecture: flush everything
		return nil
	}
	for {
		_, _, e := syscall.Syscall(sysSyncfs, f.Fd(), 0, 0)
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			return e
		}
		return nil
	}
}
