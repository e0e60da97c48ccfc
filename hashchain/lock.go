package hashchain

import (
	"os"

	"github.com/agent-rewind/rewind/internal/lockfile"
)

// flock takes an exclusive lock on f (flock(2); LockFileEx on Windows), waiting for any other holder. The kernel drops it
// when the descriptor closes, however the process ends.
func flock(f *os.File) error { return lockfile.Lock(f, lockfile.Exclusive) }

func funlock(f *os.File) error { return lockfile.Lock(f, lockfile.Unlock) }
