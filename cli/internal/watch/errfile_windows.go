package watch

import (
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/windows"

	"github.com/agent-rewind/rewind/internal/winpath"
)

// errFile is a file in folder dir for a watcher's standard error at start (Start), deleted by
// the system once the last handle to it (this process's, the watcher's) is closed: nothing of
// it is left behind, whatever happens to either process.
func errFile(dir string) (*os.File, error) {
	name := filepath.Join(dir, ".start-"+strconv.FormatInt(time.Now().UnixNano(), 36)+"-"+strconv.Itoa(os.Getpid()))
	p, err := windows.UTF16PtrFromString(winpath.Long(name))
	if err != nil {
		return nil, err
	}
	h, err := windows.CreateFile(p, windows.GENERIC_READ|windows.GENERIC_WRITE,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil, windows.CREATE_NEW,
		windows.FILE_ATTRIBUTE_TEMPORARY|windows.FILE_FLAG_DELETE_ON_CLOSE, 0)
	if err != nil {
		return nil, &os.PathError{Op: "create", Path: name, Err: err}
	}
	return os.NewFile(uintptr(h), name), nil
}
