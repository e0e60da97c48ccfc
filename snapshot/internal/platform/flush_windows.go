package platform

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/agent-rewind/rewind/internal/winpath"
)

// FlushedByWriter is true on Windows: FlushFileBuffers wants a handle with the right to write
// data, which Windows grants to no open of a read-only file, so a writer that may make its file
// read-only (a restore setting a file's mode) flushes through its own handle before it closes
// it, and has nothing to flush by name afterwards.
const FlushedByWriter = true

// OpenToFlush opens the file name so that Sync flushes it (FlushFileBuffers refuses a handle
// without the right to write data, as os.Open's is; Wine does not check): with GENERIC_WRITE,
// as itself (a reparse point is not followed), sharing everything. A folder is not opened:
// Windows gives no folder handle with that right, and NTFS logs a folder's names itself, so
// there is nothing to flush and the file is nil, with no error. A read-only file cannot be
// opened so: its error says to flush it through the handle that wrote it.
func OpenToFlush(name string) (*os.File, error) {
	p, err := syscall.UTF16PtrFromString(winpath.Long(name))
	if err != nil {
		return nil, &fs.PathError{Op: "open to flush", Path: name, Err: err}
	}
	attrs, err := syscall.GetFileAttributes(p)
	if err != nil {
		return nil, &fs.PathError{Op: "open to flush", Path: name, Err: err}
	}
	if attrs&syscall.FILE_ATTRIBUTE_DIRECTORY != 0 {
		return nil, nil
	}
	share := uint32(syscall.FILE_SHARE_READ | syscall.FILE_SHARE_WRITE | syscall.FILE_SHARE_DELETE)
	h, err := syscall.CreateFile(p, syscall.GENERIC_WRITE, share, nil, syscall.OPEN_EXISTING, syscall.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err == syscall.ERROR_ACCESS_DENIED && attrs&syscall.FILE_ATTRIBUTE_READONLY != 0 {
		err = fmt.Errorf("%w: the file is read-only, and Windows flushes only through a handle that may write: flush it through the handle that wrote it, before making it read-only", err)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open to flush", Path: name, Err: err}
	}
	return os.NewFile(uintptr(h), name), nil
}
