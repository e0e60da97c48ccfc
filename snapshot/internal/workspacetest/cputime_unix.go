//go:build linux || darwin

package workspacetest

import (
	"syscall"
	"time"
)

// CPUTime is the CPU time this process has used so far, user and system, all threads
// (getrusage(2)): what benchmarks report beside wall time on a shared machine.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
