package workspace

import (
	"syscall"
)

// identityOf returns the identity of the folder at path; APFS and HFS+ record birth times.
func identityOf(path string) (Identity, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return Identity{}, err
	}
	return Identity{Device: uint64(st.Dev), Inode: st.Ino, Birth: st.Birthtimespec.Sec*1e9 + st.Birthtimespec.Nsec}, nil
}
