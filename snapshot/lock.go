package snapshot

import (
	"fmt"
	"os"
	"syscall"

	"github.com/agent-rewind/rewind/internal/regular"
)

// flockFile takes an exclusive flock(2) on name, waiting for any other holder. The kernel drops
// the lock when the holder exits, however it exits, so a killed process never leaves it held.
// flock locks belong to an open file description: a second open of the same file in the same
// process conflicts like another process would (see Options.Lock).
func flockFile(name string) (unlock func() error, err error) {
	f, err := regular.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
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
	return f.Close, nil
}
