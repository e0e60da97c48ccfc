package workspace

import (
	"fmt"
	"os"
	"syscall"
)

// Lock takes the workspace's exclusive writer lock (.rewind/lock), waiting for any other holder.
// The lock is an flock(2) advisory lock: the kernel drops it when the holder exits, however it
// exits, so a killed process never leaves the workspace locked.
func (w *Workspace) Lock() (unlock func() error, err error) {
	name := w.Path("lock")
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", name, err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	return f.Close, nil // closing the descriptor releases the lock
}
