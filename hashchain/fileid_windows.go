package hashchain

import (
	"os"
	"syscall"
	"unsafe"
)

var procGetFileInformationByHandleEx = syscall.NewLazyDLL("kernel32.dll").NewProc("GetFileInformationByHandleEx")

// fileBasicInfo is FILE_BASIC_INFO: times in 100 ns since 1601.
type fileBasicInfo struct {
	CreationTime, LastAccessTime, LastWriteTime, ChangeTime int64
	FileAttributes                                          uint32
	_                                                       uint32
}

// identify returns the identity of f's current state (see stamp.go): the volume's serial
// number and the file's index for device and inode, and its change time. Windows lets a handle
// with write-attribute access set the change time, so on Windows the stamp trusts that whoever
// could write the chain did not also set its change time back; the stamp is no key either way
// (anyone who can write the chain can write a stamp), and the anchor is what catches tampering.
func identify(f *os.File) (fileID, error) {
	h := syscall.Handle(f.Fd())
	var info syscall.ByHandleFileInformation
	if err := syscall.GetFileInformationByHandle(h, &info); err != nil {
		return fileID{}, &os.PathError{Op: "GetFileInformationByHandle", Path: f.Name(), Err: err}
	}
	var basic fileBasicInfo
	const fileBasicInfoClass = 0
	r, _, err := procGetFileInformationByHandleEx.Call(uintptr(h), fileBasicInfoClass, uintptr(unsafe.Pointer(&basic)), unsafe.Sizeof(basic))
	if r == 0 {
		return fileID{}, &os.PathError{Op: "GetFileInformationByHandleEx", Path: f.Name(), Err: err}
	}
	const epochDelta = 116444736000000000 // 1601 to 1970 in 100 ns
	return fileID{
		Dev:   uint64(info.VolumeSerialNumber),
		Ino:   uint64(info.FileIndexHigh)<<32 | uint64(info.FileIndexLow),
		Size:  int64(info.FileSizeHigh)<<32 | int64(info.FileSizeLow),
		Ctime: (basic.ChangeTime - epochDelta) * 100,
	}, nil
}
