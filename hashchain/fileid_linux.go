package hashchain

import (
	"os"
	"syscall"
)

// idOf returns the identity of a file's current state (see stamp.go).
func idOf(fi os.FileInfo) fileID {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{Size: fi.Size()}
	}
	return fileID{Dev: uint64(st.Dev), Ino: uint64(st.Ino), Size: st.Size, Ctime: int64(st.Ctim.Sec)*1e9 + int64(st.Ctim.Nsec)}
}
