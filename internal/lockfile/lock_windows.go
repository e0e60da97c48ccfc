package lockfile

import (
	"errors"
	"os"
	"syscall"
	"unsafe"
)

// What Lock and Open take, with flock's meanings.
const (
	Shared      = 1
	Exclusive   = 2
	Unlock      = 8
	NonBlocking = 4
)

var (
	kernel32         = syscall.NewLazyDLL("kernel32.dll")
	procLockFileEx   = kernel32.NewProc("LockFileEx")
	procUnlockFileEx = kernel32.NewProc("UnlockFileEx")
)

// LockFileEx's flags, and the errors it gives for a lock held elsewhere or none to release.
const (
	lockfileFailImmediately = 0x1
	lockfileExclusiveLock   = 0x2
	errorLockViolation      = syscall.Errno(33)
	errorNotLocked          = syscall.Errno(158)
	errorIOPending          = syscall.Errno(997)
)

// Lock applies how (Exclusive, Shared or Unlock, with NonBlocking not to wait) to f, as flock
// does: the whole file, one lock per handle, a held one converted by releasing it first (flock's
// conversion is not atomic either). A lock held elsewhere under NonBlocking is
// syscall.EWOULDBLOCK.
func Lock(f *os.File, how int) error {
	h := syscall.Handle(f.Fd())
	// Nothing to release is ERROR_NOT_LOCKED on Windows and a lock violation under Wine.
	if err := unlock(h); err != nil && !errors.Is(err, errorNotLocked) && !errors.Is(err, errorLockViolation) {
		return err
	}
	if how&Unlock != 0 {
		return nil
	}
	var flags uintptr
	if how&Exclusive != 0 {
		flags |= lockfileExclusiveLock
	}
	if how&NonBlocking != 0 {
		flags |= lockfileFailImmediately
	}
	var ol syscall.Overlapped // offset 0: the lock covers the whole file, as far as it can grow
	r, _, err := procLockFileEx.Call(uintptr(h), flags, 0, 0xFFFFFFFF, 0xFFFFFFFF, uintptr(unsafe.Pointer(&ol)))
	if r != 0 {
		return nil
	}
	if errors.Is(err, errorLockViolation) || errors.Is(err, errorIOPending) {
		return syscall.EWOULDBLOCK
	}
	return err
}

func unlock(h syscall.Handle) error {
	var ol syscall.Overlapped
	r, _, err := procUnlockFileEx.Call(uintptr(h), 0, 0xFFFFFFFF, 0xFFFFFFFF, uintptr(unsafe.Pointer(&ol)))
	if r != 0 {
		return nil
	}
	return err
}
