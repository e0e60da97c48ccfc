//go:build linux || darwin

package platform

import (
	"io/fs"
	"os"
	"syscall"
)

// Fstat is the Stat of the open file f.
func Fstat(f *os.File) (Stat, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return Stat{}, err
	}
	return fromStat(&st), nil
}

// Lstat is the Stat of name, not following a final symlink.
func Lstat(name string) (Stat, error) {
	var st syscall.Stat_t
	if err := syscall.Lstat(name, &st); err != nil {
		return Stat{}, err
	}
	return fromStat(&st), nil
}

// FileInfoStat is the Stat of fi, an lstat or fstat result of os, without another system call;
// false when fi did not come from the system (fi.Sys is not its stat).
func FileInfoStat(fi fs.FileInfo) (Stat, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return Stat{}, false
	}
	return fromStat(st), true
}

// FstatLinks is the Stat of the open file f and its count of hard links: a restore rewrites a
// file with several names rather than changing the mode of all of them.
func FstatLinks(f *os.File) (Stat, uint64, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return Stat{}, 0, err
	}
	return fromStat(&st), uint64(st.Nlink), nil
}
