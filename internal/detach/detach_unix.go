//go:build unix

package detach

import (
	"os/exec"
	"syscall"
)

// Set makes cmd, when started, a process of its own that outlives the caller.
func Set(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}
