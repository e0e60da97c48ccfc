package workspace

import (
	"os"
	"syscall"
)

// killedCode is the exit code die ends the process with (137, as a shell reports SIGKILL):
// Windows has no signals, and os.Process.Kill's code, 1, is also an ordinary failure's.
const killedCode = 137

// die ends this process at once, as a crash would (TerminateProcess runs no exit code).
func die() {
	h, _ := syscall.GetCurrentProcess()
	syscall.TerminateProcess(h, killedCode)
	select {}
}

// killed reports whether die ended the process.
func killed(ps *os.ProcessState) bool { return ps.ExitCode() == killedCode }
