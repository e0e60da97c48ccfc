package platform

import (
	"fmt"
	"path/filepath"
	"syscall"
)

// SyncFS flushes the whole volume holding dir, as syncfs(2) flushes a file system: Windows
// does so for FlushFileBuffers on the volume's handle (\\.\C:), which only an administrator
// may open for writing. Anyone else gets ErrNoVolumeFlush, never a flush that did not happen:
// the caller then fsyncs each file instead.
func SyncFS(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("flush the volume holding %s: %w", dir, err)
	}
	vol := filepath.VolumeName(abs)
	if len(vol) != 2 || vol[1] != ':' {
		return fmt.Errorf("flush the volume holding %s: %q is not a drive letter (a share or a folder mount has no volume handle to flush): %w", dir, vol, ErrNoVolumeFlush)
	}
	p, err := syscall.UTF16PtrFromString(`\\.\` + vol)
	if err != nil {
		return err
	}
	share := uint32(syscall.FILE_SHARE_READ | syscall.FILE_SHARE_WRITE)
	h, err := syscall.CreateFile(p, syscall.GENERIC_READ|syscall.GENERIC_WRITE, share, nil, syscall.OPEN_EXISTING, 0, 0)
	if err == syscall.ERROR_ACCESS_DENIED {
		return fmt.Errorf("flush volume %s holding %s: %w (Windows lets only an administrator flush a whole volume): %w", vol, dir, err, ErrNoVolumeFlush)
	}
	if err != nil {
		return fmt.Errorf("flush volume %s holding %s: %w", vol, dir, err)
	}
	defer syscall.CloseHandle(h)
	if err := syscall.FlushFileBuffers(h); err == errorInvalidFunction {
		// A volume that does not flush whole (Wine 8's): each file is flushed instead.
		return fmt.Errorf("flush volume %s holding %s: %w: %w", vol, dir, err, ErrNoVolumeFlush)
	} else if err != nil {
		return fmt.Errorf("flush volume %s holding %s: %w", vol, dir, err)
	}
	return nil
}

const errorInvalidFunction = syscall.Errno(1)
