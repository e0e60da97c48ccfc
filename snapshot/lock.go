package snapshot

import (
	"syscall"

	"github.com/agent-rewind/rewind/internal/lockfile"
)

// flockFile takes an exclusive flock(2) on name, waiting for any other holder. The kernel drops
// the lock when the holder exits, however it exits, so a killed process never leaves it held.
// flock locks belong to an open file description: a second open of the same file in the same
// process conflicts like another process would (see Options.Lock).
func flockFile(name string) (unlock func() error, err error) {
	f, err := lockfile.Open(name, syscall.LOCK_EX)
	if err != nil {
		return nil, err
	}
	return f.Close, nil
}
