package detach_test

import (
	"fmt"
	"os/exec"
	"runtime"

	"github.com/agent-rewind/rewind/internal/detach"
)

// A program started detached runs on after its caller exits; here the caller waits for it.
func Example() {
	name, args := "sh", []string{"-c", "echo detached"}
	if runtime.GOOS == "windows" {
		name, args = "cmd", []string{"/c", "echo detached"}
	}
	cmd := exec.Command(name, args...)
	detach.Set(cmd)
	out, err := cmd.Output()
	fmt.Printf("%s %v\n", out[:8], err)
	// Output: detached <nil>
}
