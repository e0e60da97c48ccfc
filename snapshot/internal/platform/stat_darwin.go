package platform

import (
	"os"
	"path/filepath"
	"syscall"
)

// The macOS versions of stat_linux.go: the syscall package has no *at calls here, so paths are
// joined (a little slower), and there is no syncfs(2): sync(2) flushes every file system.

func fromStat(st *syscall.Stat_t) Stat {
	return Stat{
		Mode:  uint32(st.Mode),
		Size:  st.Size,
		Mtime: st.Mtimespec.Sec*1e9 + st.Mtimespec.Nsec,
		Ctime: st.Ctimespec.Sec*1e9 + st.Ctimespec.Nsec,
		Ino:   st.Ino,
	}
}

func LstatAt(_ int, dir, name string) (Stat, error) {
	return Lstat(filepath.Join(dir, name))
}

func ReadlinkAt(_ int, dir, name string) (string, error) {
	return os.Readlink(filepath.Join(dir, name))
}

func SyncFS(string) error {
	syscall.Sync()
	return nil
}
