package hashchain

import (
	"os"
	"syscall"
)

// flock takes an exclusive flock(2) on f, waiting for any other holder. The kernel drops it
// when the descriptor closes, however the process ends.
func flock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			return err
		}
	}
}

func funlock(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}
