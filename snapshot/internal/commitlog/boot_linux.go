package commitlog

import (
	"os"
	"strings"
	"syscall"
)

// BootID returns the kernel's id of this boot (a random UUID made at each start): what was
// written without a sync is still there, in the page cache, for as long as it is the same.
func BootID() (string, error) {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", err
	}
	id := strings.TrimSpace(string(b))
	if len(id) != bootLen {
		return "", syscall.EINVAL
	}
	return id, nil
}

// datasync flushes f's data and what reading it back needs (its size), not its times.
func datasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			return err
		}
	}
}
