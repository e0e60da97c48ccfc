package platform

import (
	"io/fs"
	"os"
	"syscall"
	"unsafe"
)

var (
	procReOpenFile                 = syscall.NewLazyDLL("kernel32.dll").NewProc("ReOpenFile")
	procSetFileInformationByHandle = syscall.NewLazyDLL("kernel32.dll").NewProc("SetFileInformationByHandle")
)

const fileWriteAttributes = 0x100

// Fchmod sets what Windows keeps of mode on the open file f: the read-only attribute, set when
// mode has no write bit. Windows has no executable bit, so a change of the exec bits alone
// changes nothing. f may be open for reading only (the restore's no-follow opens are), which
// gives no right to write attributes, so the attributes are set through a second handle on the
// same file (ReOpenFile: no path is looked up again) with only the rights to read and write
// attributes, which a read-only file grants.
func Fchmod(f *os.File, mode fs.FileMode) error {
	share := uint32(syscall.FILE_SHARE_READ | syscall.FILE_SHARE_WRITE | syscall.FILE_SHARE_DELETE)
	flags := uint32(syscall.FILE_FLAG_BACKUP_SEMANTICS | syscall.FILE_FLAG_OPEN_REPARSE_POINT)
	r, _, err := procReOpenFile.Call(f.Fd(), fileReadAttributes|fileWriteAttributes, uintptr(share), uintptr(flags))
	h := syscall.Handle(r)
	if h == syscall.InvalidHandle {
		return &fs.PathError{Op: "chmod", Path: f.Name(), Err: err}
	}
	defer syscall.CloseHandle(h)
	var basic fileBasicInformation
	if err := getFileInformationByHandleEx(h, fileBasicInfo, unsafe.Pointer(&basic), unsafe.Sizeof(basic)); err != nil {
		return &fs.PathError{Op: "chmod", Path: f.Name(), Err: err}
	}
	attrs := basic.FileAttributes
	if mode&0o200 != 0 {
		attrs &^= syscall.FILE_ATTRIBUTE_READONLY
	} else {
		attrs |= syscall.FILE_ATTRIBUTE_READONLY
	}
	if attrs == basic.FileAttributes {
		return nil
	}
	if attrs == 0 {
		attrs = syscall.FILE_ATTRIBUTE_NORMAL // 0 would mean "leave the attributes as they are"
	}
	// Zero times leave the file's times as they are; only the attributes change.
	set := fileBasicInformation{FileAttributes: attrs}
	if r, _, err := procSetFileInformationByHandle.Call(uintptr(h), fileBasicInfo, uintptr(unsafe.Pointer(&set)), unsafe.Sizeof(set)); r == 0 {
		return &fs.PathError{Op: "chmod", Path: f.Name(), Err: err}
	}
	return nil
}
