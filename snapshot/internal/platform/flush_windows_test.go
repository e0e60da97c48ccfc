package platform

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/agent-rewind/rewind/internal/winpath"
)

// grantedAccess is the access mask handle h was opened with (NtQueryObject's
// ObjectBasicInformation): what FlushFileBuffers checks, which Wine does not.
func grantedAccess(t *testing.T, h uintptr) uint32 {
	t.Helper()
	var info struct {
		Attributes, GrantedAccess, HandleCount, PointerCount uint32
		_                                                    [10]uint32
	}
	const objectBasicInformation = 0
	r, _, _ := syscall.NewLazyDLL("ntdll.dll").NewProc("NtQueryObject").Call(h, objectBasicInformation, uintptr(unsafe.Pointer(&info)), unsafe.Sizeof(info), 0)
	if r != 0 {
		t.Skipf("NtQueryObject(ObjectBasicInformation) gave NTSTATUS 0x%x: the access cannot be checked here", r)
	}
	return info.GrantedAccess
}

// TestOpenToFlush: a file opens with the right to write data, without which FlushFileBuffers
// fails on Windows (ERROR_ACCESS_DENIED), and its Sync succeeds; a folder gives no file and no
// error (nothing to flush); a read-only file's refusal says what to do.
func TestOpenToFlush(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "f")
	if err := os.WriteFile(name, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := OpenToFlush(name)
	if err != nil {
		t.Fatal(err)
	}
	const fileWriteData = 0x2
	if got := grantedAccess(t, f.Fd()); got&fileWriteData == 0 {
		t.Errorf("OpenToFlush's handle has access 0x%x, without FILE_WRITE_DATA: FlushFileBuffers would refuse it", got)
	}
	if err := f.Sync(); err != nil {
		t.Errorf("Sync: %v", err)
	}
	f.Close()
	if f, err := OpenToFlush(dir); f != nil || err != nil {
		t.Errorf("OpenToFlush(folder) = %v, %v; want nothing to flush", f, err)
	}
	os.Chmod(name, 0o444)
	defer os.Chmod(name, 0o644)
	f, err = OpenToFlush(name)
	if err == nil {
		f.Close()
		if winpath.UnderWine() {
			t.Skip("Wine 8 opens a read-only file for writing: the refusal Windows gives cannot be checked here")
		}
		t.Fatal("a read-only file opened for writing")
	}
	if !strings.Contains(err.Error(), "read-only") || !strings.Contains(err.Error(), name) {
		t.Errorf("OpenToFlush(read-only) = %v, want the path and why", err)
	}
}
