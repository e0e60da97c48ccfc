package hashchain

import (
	"os"
	"syscall"

	"github.com/agent-rewind/rewind/internal/lockfile"
)

// flock takes an exclusive flock(2) on f, waiting for any other holder. The kernel drops it
// when the descriptor closes, however the process ends.
func flock(f *os.File) error { return lockfile.Lock(f, syscall.LOCK_EX) }

func funlock(f *os.File) error { return lockfile.Lock(f, syscall.LOCK_UN) }
