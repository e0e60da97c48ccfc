package detach

import (
	"os/exec"
	"syscall"
)

// The process creation flags of winbase.h.
const (
	detachedProcess       = 0x00000008
	createNewProcessGroup = 0x00000200
)

// Set makes cmd, when started, a process of its own that outlives the caller. It does not ask to
// break away from the caller's job object (an agent that kills its hook's job on a timeout would
// end the child too): CreateProcess fails outright where the job forbids breaking away.
func Set(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: detachedProcess | createNewProcessGroup, HideWindow: true}
}
