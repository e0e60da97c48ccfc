package gateway

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/agent-rewind/rewind/internal/regular"
)

// lockFile takes an exclusive flock(2) on path, waiting for another holder; closing the
// returned file releases it, and so does the holder's exit, however it exits.
func lockFile(path string) (*os.File, error) {
	f, err := regular.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return f, nil
}
