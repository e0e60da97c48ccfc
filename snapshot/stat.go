//go:build linux || darwin

package snapshot

import (
	"os"
	"syscall"
)

// statInfo is what the stat cache compares: enough to tell that a file changed without reading it.
// fromStat, in stat_linux.go and stat_darwin.go, fills it from each system's Stat_t.
type statInfo struct {
	Mode  uint32 // st_mode: type and permission bits
	Size  int64
	Mtime int64 // ns since the epoch
	Ctime int64 // ns since the epoch
	Ino   uint64
}

func fstatFile(f *os.File) (statInfo, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return statInfo{}, err
	}
	return fromStat(&st), nil
}

func lstatPath(name string) (statInfo, error) {
	var st syscall.Stat_t
	if err := syscall.Lstat(name, &st); err != nil {
		return statInfo{}, err
	}
	return fromStat(&st), nil
}
