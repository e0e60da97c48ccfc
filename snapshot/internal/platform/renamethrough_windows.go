package platform

import (
	"os"
	"path/filepath"
	"syscall"
	"unsafe"
)

// A rename on Windows is durable when it returns only if the file was opened with
// FILE_WRITE_THROUGH: that is all MoveFileEx's MOVEFILE_WRITE_THROUGH does before its
// NtSetInformationFile, and what internal/durable asks for outside a root. os.Root's Rename
// opens without it, so renameThrough does what it does (the source opened relative to its
// folder's handle, never following a reparse point; the new name relative to its folder's)
// with FILE_WRITE_THROUGH added: there is no directory fsync on Windows to make up for it.

var (
	procNtOpenFile            = syscall.NewLazyDLL("ntdll.dll").NewProc("NtOpenFile")
	procNtSetInformationFile  = syscall.NewLazyDLL("ntdll.dll").NewProc("NtSetInformationFile")
	procRtlNtStatusToDosError = syscall.NewLazyDLL("ntdll.dll").NewProc("RtlNtStatusToDosError")
)

// NtOpenFile's access, options and NtSetInformationFile's classes and flags (wdm.h, ntifs.h).
const (
	accessDelete      = 0x00010000
	accessSynchronize = 0x00100000

	fileWriteThrough          = 0x00000002
	fileSynchronousIONonalert = 0x00000020
	fileOpenForBackupIntent   = 0x00004000
	fileOpenReparsePoint      = 0x00200000

	fileRenameInformation   = 10
	fileRenameInformationEx = 65

	fileRenameReplaceIfExists = 0x1
	fileRenamePosixSemantics  = 0x2

	objCaseInsensitive = 0x40
)

type unicodeString struct {
	Length, MaximumLength uint16
	Buffer                *uint16
}

type objectAttributes struct {
	Length             uint32
	RootDirectory      syscall.Handle
	ObjectName         *unicodeString
	Attributes         uint32
	SecurityDescriptor uintptr
	SecurityQoS        uintptr
}

// fileRenameInformation is FILE_RENAME_INFORMATION(_EX): Flags is ReplaceIfExists, a BOOLEAN,
// in the older class. One name component fits: both names are relative to their folder.
type fileRenameInfo struct {
	Flags          uint32
	RootDirectory  syscall.Handle
	FileNameLength uint32
	FileName       [syscall.MAX_PATH]uint16
}

// ntError is an NTSTATUS as the Win32 error it stands for (ERROR_SHARING_VIOLATION, ...), so
// that errors.Is, winpath.Retry and held see what they would see from os.Root.
func ntError(status uintptr) error {
	r, _, _ := procRtlNtStatusToDosError.Call(status)
	return syscall.Errno(r)
}

// openForRename opens name in the folder dir for renaming, written through, as itself.
func openForRename(dir syscall.Handle, name string) (syscall.Handle, error) {
	p, err := syscall.UTF16FromString(name)
	if err != nil {
		return 0, err
	}
	us := unicodeString{Length: uint16(2 * (len(p) - 1)), MaximumLength: uint16(2 * len(p)), Buffer: &p[0]}
	oa := objectAttributes{RootDirectory: dir, ObjectName: &us, Attributes: objCaseInsensitive}
	oa.Length = uint32(unsafe.Sizeof(oa))
	var h syscall.Handle
	var iosb [2]uintptr
	share := uintptr(syscall.FILE_SHARE_READ | syscall.FILE_SHARE_WRITE | syscall.FILE_SHARE_DELETE)
	opts := uintptr(fileWriteThrough | fileSynchronousIONonalert | fileOpenForBackupIntent | fileOpenReparsePoint)
	r, _, _ := procNtOpenFile.Call(uintptr(unsafe.Pointer(&h)), accessDelete|accessSynchronize, uintptr(unsafe.Pointer(&oa)), uintptr(unsafe.Pointer(&iosb)), share, opts)
	if r != 0 {
		return 0, ntError(r)
	}
	return h, nil
}

// renameThrough renames old over new in root, both relative to root, written through.
func renameThrough(root *os.Root, old, new string) error {
	wrap := func(err error) error { return &os.LinkError{Op: "rename", Old: old, New: new, Err: err} }
	oldDir, err := root.Open(filepath.Dir(old))
	if err != nil {
		return wrap(err)
	}
	defer oldDir.Close()
	newDir := oldDir
	if filepath.Dir(new) != filepath.Dir(old) {
		if newDir, err = root.Open(filepath.Dir(new)); err != nil {
			return wrap(err)
		}
		defer newDir.Close()
	}
	h, err := openForRename(syscall.Handle(oldDir.Fd()), filepath.Base(old))
	if err != nil {
		return wrap(err)
	}
	defer syscall.CloseHandle(h)
	p, err := syscall.UTF16FromString(filepath.Base(new))
	if err != nil || len(p) > syscall.MAX_PATH {
		return wrap(syscall.EINVAL)
	}
	info := fileRenameInfo{RootDirectory: syscall.Handle(newDir.Fd()), FileNameLength: uint32(2 * (len(p) - 1))}
	copy(info.FileName[:], p)
	// POSIX semantics replace a file others hold open sharing its deletion; a file system
	// without them (FAT, Wine) takes the older class, as os.Root's Rename does.
	info.Flags = fileRenameReplaceIfExists | fileRenamePosixSemantics
	var iosb [2]uintptr
	r, _, _ := procNtSetInformationFile.Call(uintptr(h), uintptr(unsafe.Pointer(&iosb)), uintptr(unsafe.Pointer(&info)), unsafe.Sizeof(info), fileRenameInformationEx)
	if r != 0 {
		info.Flags = 1 // ReplaceIfExists
		r, _, _ = procNtSetInformationFile.Call(uintptr(h), uintptr(unsafe.Pointer(&iosb)), uintptr(unsafe.Pointer(&info)), unsafe.Sizeof(info), fileRenameInformation)
	}
	if r != 0 {
		return wrap(ntError(r))
	}
	return nil
}
