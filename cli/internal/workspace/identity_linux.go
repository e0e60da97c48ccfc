package workspace

import (
	"golang.org/x/sys/unix"
)

// identityOf returns the identity of the folder at path, with its birth time from statx(2)
// where the kernel and file system provide one.
func identityOf(path string) (Identity, error) {
	var st unix.Statx_t
	err := unix.Statx(unix.AT_FDCWD, path, unix.AT_STATX_SYNC_AS_STAT, unix.STATX_INO|unix.STATX_BTIME, &st)
	if err == unix.ENOSYS {
		var s unix.Stat_t
		if err := unix.Stat(path, &s); err != nil {
			return Identity{}, err
		}
		return Identity{Device: uint64(s.Dev), Inode: s.Ino}, nil
	}
	if err != nil {
		return Identity{}, err
	}
	id := Identity{Device: unix.Mkdev(st.Dev_major, st.Dev_minor), Inode: st.Ino}
	if st.Mask&unix.STATX_BTIME != 0 {
		id.Birth = st.Btime.Sec*1e9 + int64(st.Btime.Nsec)
	}
	return id, nil
}
