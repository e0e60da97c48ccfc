package workspacetest

import (
	"syscall"
	"time"
)

// CPUTime is the CPU time this process has used so far, user and system, all threads
// (GetProcessTimes): what benchmarks report beside wall time on a shared machine.
func CPUTime() time.Duration {
	var created, exited, kernel, user syscall.Filetime
	h, _ := syscall.GetCurrentProcess()
	syscall.GetProcessTimes(h, &created, &exited, &kernel, &user)
	// FILETIME durations count 100 ns ticks.
	ticks := func(ft syscall.Filetime) int64 { return int64(ft.HighDateTime)<<32 | int64(ft.LowDateTime) }
	return time.Duration((ticks(kernel) + ticks(user)) * 100)
}
