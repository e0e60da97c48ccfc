package platform

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"unsafe"

	"github.com/agent-rewind/rewind/internal/winpath"
)

// typeReparse is the type of a reparse point that is neither a symlink nor a socket (a junction
// or mount point, a OneDrive or other cloud placeholder, an app execution link, ...): no POSIX
// type has these bits, so the walk skips it as a kind it does not capture; it is never followed
// out of the workspace and a cloud file is never hydrated (its contents are never read).
const typeReparse = 0o150000

// The reparse tags modeOf tells apart (winnt.h).
const (
	reparseTagSymlink = 0xA000000C
	reparseTagAFUnix  = 0x80000023
	reparseTagDedup   = 0x80000013 // deduplicated data: a regular file to every reader
)

// A file whose data is not (all) on the disk: reading it would fetch it from the cloud.
const (
	fileAttributeRecallOnOpen       = 0x00040000
	fileAttributeRecallOnDataAccess = 0x00400000
)

// modeOf gives the POSIX-shaped mode of a file with attributes attrs and reparse tag tag (0
// unless attrs has FILE_ATTRIBUTE_REPARSE_POINT). Windows has no executable bit and no
// owner/group/other: the permission bits are those git records for an ordinary file or
// folder, without write when the read-only attribute is set.
func modeOf(attrs, tag uint32) uint32 {
	perm := uint32(0o644)
	if attrs&syscall.FILE_ATTRIBUTE_DIRECTORY != 0 {
		perm = 0o755
	}
	if attrs&syscall.FILE_ATTRIBUTE_READONLY != 0 {
		perm &^= 0o222
	}
	if attrs&syscall.FILE_ATTRIBUTE_REPARSE_POINT != 0 {
		switch tag {
		case reparseTagSymlink:
			return syscall.S_IFLNK | 0o777
		case reparseTagAFUnix:
			return syscall.S_IFSOCK | perm
		case reparseTagDedup:
		default:
			return typeReparse | perm
		}
	}
	if attrs&(fileAttributeRecallOnOpen|fileAttributeRecallOnDataAccess) != 0 {
		return typeReparse | perm
	}
	if attrs&syscall.FILE_ATTRIBUTE_DIRECTORY != 0 {
		return syscall.S_IFDIR | perm
	}
	return syscall.S_IFREG | perm
}

var (
	procGetFileInformationByHandleEx = syscall.NewLazyDLL("kernel32.dll").NewProc("GetFileInformationByHandleEx")
	procNtQueryInformationFile       = syscall.NewLazyDLL("ntdll.dll").NewProc("NtQueryInformationFile")
)

// GetFileInformationByHandleEx's classes used here, and their structures (minwinbase.h).
const (
	fileBasicInfo        = 0
	fileStandardInfo     = 1
	fileAttributeTagInfo = 9
)

type fileBasicInformation struct {
	CreationTime, LastAccessTime, LastWriteTime, ChangeTime int64 // FILETIME units
	FileAttributes                                          uint32
	_                                                       uint32
}

type fileStandardInformation struct {
	AllocationSize, EndOfFile int64
	NumberOfLinks             uint32
	DeletePending, Directory  byte
	_                         uint16
}

type fileAttributeTagInformation struct {
	FileAttributes uint32
	ReparseTag     uint32
}

func getFileInformationByHandleEx(h syscall.Handle, class uint32, buf unsafe.Pointer, size uintptr) error {
	r, _, err := procGetFileInformationByHandleEx.Call(uintptr(h), uintptr(class), uintptr(buf), size)
	if r == 0 {
		return err
	}
	return nil
}

// fileID is the file's 64-bit ID on its volume (FILE_INTERNAL_INFORMATION, the NTFS file
// reference), from NtQueryInformationFile: GetFileInformationByHandle and FileIdInfo give it
// too, with the volume's serial, but ask the volume for that each time (2.5 ms a call under
// Wine 8, against 4 µs for this).
func fileID(h syscall.Handle) (uint64, error) {
	const fileInternalInformation = 6
	var iosb [2]uintptr // IO_STATUS_BLOCK
	var id uint64
	r, _, _ := procNtQueryInformationFile.Call(uintptr(h), uintptr(unsafe.Pointer(&iosb)), uintptr(unsafe.Pointer(&id)), unsafe.Sizeof(id), fileInternalInformation)
	if r != 0 { // an NTSTATUS
		return 0, errors.New("NtQueryInformationFile(FileInternalInformation): NTSTATUS 0x" + strconv.FormatUint(uint64(r), 16))
	}
	return id, nil
}

// fromHandle is the Stat of the file open as h: its times and attributes (FileBasicInfo),
// size (FileStandardInfo), ID (fileID) and for a reparse point its tag. Ino is the file ID
// alone: the stat cache compares a path's stat with its own earlier one, within the one
// volume the walk stays on (a mount point is a reparse point, never followed).
func fromHandle(h syscall.Handle) (Stat, error) {
	st, _, err := statLinks(h)
	return st, err
}

// statLinks is fromHandle with the file's count of hard links (FileStandardInfo has it).
func statLinks(h syscall.Handle) (Stat, uint64, error) {
	var basic fileBasicInformation
	if err := getFileInformationByHandleEx(h, fileBasicInfo, unsafe.Pointer(&basic), unsafe.Sizeof(basic)); err != nil {
		return Stat{}, 0, err
	}
	var std fileStandardInformation
	if err := getFileInformationByHandleEx(h, fileStandardInfo, unsafe.Pointer(&std), unsafe.Sizeof(std)); err != nil {
		return Stat{}, 0, err
	}
	id, err := fileID(h)
	if err != nil {
		return Stat{}, 0, err
	}
	var tag uint32
	if basic.FileAttributes&syscall.FILE_ATTRIBUTE_REPARSE_POINT != 0 {
		var ti fileAttributeTagInformation
		if err := getFileInformationByHandleEx(h, fileAttributeTagInfo, unsafe.Pointer(&ti), unsafe.Sizeof(ti)); err != nil {
			return Stat{}, 0, err
		}
		tag = ti.ReparseTag
	}
	return Stat{
		Mode:  modeOf(basic.FileAttributes, tag),
		Size:  std.EndOfFile,
		Mtime: filetimeNanoseconds(basic.LastWriteTime),
		Ctime: filetimeNanoseconds(basic.ChangeTime),
		Ino:   id,
	}, uint64(std.NumberOfLinks), nil
}

// filetimeNanoseconds converts a FILETIME count (100 ns since 1601) to ns since the epoch.
func filetimeNanoseconds(ft int64) int64 {
	t := syscall.Filetime{LowDateTime: uint32(ft), HighDateTime: uint32(ft >> 32)}
	return t.Nanoseconds()
}

// Fstat is the Stat of the open file f.
func Fstat(f *os.File) (Stat, error) {
	return fromHandle(syscall.Handle(f.Fd()))
}

// Lstat is the Stat of name, not following a final reparse point: it opens name as itself
// with only the right to read attributes, sharing everything, so it neither waits for nor
// disturbs another process that holds the file, and a cloud file is not hydrated.
func Lstat(name string) (Stat, error) {
	h, err := openAttributes(name)
	if err != nil {
		return Stat{}, &fs.PathError{Op: "lstat", Path: name, Err: err}
	}
	defer syscall.CloseHandle(h)
	st, err := fromHandle(h)
	if err != nil {
		return Stat{}, &fs.PathError{Op: "lstat", Path: name, Err: err}
	}
	return st, nil
}

const fileReadAttributes = 0x80

func openAttributes(name string) (syscall.Handle, error) {
	p, err := syscall.UTF16PtrFromString(winpath.Long(name))
	if err != nil {
		return syscall.InvalidHandle, err
	}
	share := uint32(syscall.FILE_SHARE_READ | syscall.FILE_SHARE_WRITE | syscall.FILE_SHARE_DELETE)
	// Backup semantics: a folder opens too.
	flags := uint32(syscall.FILE_FLAG_BACKUP_SEMANTICS | syscall.FILE_FLAG_OPEN_REPARSE_POINT)
	return syscall.CreateFile(p, fileReadAttributes, share, nil, syscall.OPEN_EXISTING, flags, 0)
}

// FileInfoStat is false on Windows: an os FileInfo holds the attributes, times and size
// (syscall.Win32FileAttributeData) but neither the file ID nor the change time, so a Stat
// needs a handle (Fstat) or a path (Lstat).
func FileInfoStat(fs.FileInfo) (Stat, bool) {
	return Stat{}, false
}

// FstatLinks is the Stat of the open file f and its count of hard links (FileStandardInfo): a
// restore rewrites a file with several names rather than changing the attributes of all of
// them (Windows keeps the read-only attribute on the file, not on each of its names, as POSIX
// keeps the mode).
func FstatLinks(f *os.File) (Stat, uint64, error) {
	return statLinks(syscall.Handle(f.Fd()))
}

// LstatAt is Lstat of dir\name: Windows has no stat relative to an open folder in its
// documented API, so the path is joined (dirfd, from OpenDir, is not needed). The folder's
// listing (FileIdBothDirectoryInfo) would give the same fields for all its entries at once,
// but NTFS updates an entry's size and times there lazily, and a hard link's only when it is
// written through that name: a stat cache fed from it would miss changes.
func LstatAt(_ int, dir, name string) (Stat, error) {
	return Lstat(filepath.Join(dir, name))
}

// ReadlinkAt reads the target of the symlink dir\name.
func ReadlinkAt(_ int, dir, name string) (string, error) {
	return os.Readlink(filepath.Join(dir, name))
}
