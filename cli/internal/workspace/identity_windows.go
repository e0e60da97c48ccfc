package workspace

import (
	"os"
	"syscall"

	"github.com/agent-rewind/rewind/internal/winpath"
)

// identityOf returns the identity of the folder at path (a final link followed, as stat does):
// its volume's serial number and its 64-bit file ID on that volume. Birth stays 0: the ID is
// already never reused on NTFS (it carries a sequence number that changes when its record is
// reused), whereas a creation time can be carried over to a new folder made at the same path
// (Windows' file-name tunnelling), and a volume's serial does not change from mount to mount.
func identityOf(path string) (Identity, error) {
	p, err := syscall.UTF16PtrFromString(winpath.Long(path))
	if err != nil {
		return Identity{}, &os.PathError{Op: "open", Path: path, Err: err}
	}
	const fileReadAttributes = 0x80
	share := uint32(syscall.FILE_SHARE_READ | syscall.FILE_SHARE_WRITE | syscall.FILE_SHARE_DELETE)
	// Backup semantics: a folder opens too; read-attributes only, so nothing else is disturbed.
	h, err := syscall.CreateFile(p, fileReadAttributes, share, nil, syscall.OPEN_EXISTING, syscall.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return Identity{}, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.CloseHandle(h)
	var info syscall.ByHandleFileInformation
	if err := syscall.GetFileInformationByHandle(h, &info); err != nil {
		return Identity{}, &os.PathError{Op: "GetFileInformationByHandle", Path: path, Err: err}
	}
	return Identity{Device: uint64(info.VolumeSerialNumber), Inode: uint64(info.FileIndexHigh)<<32 | uint64(info.FileIndexLow)}, nil
}
