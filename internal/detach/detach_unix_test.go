//go:build unix

package detach

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestOwnSession: the child leads a session of its own, so the caller's terminal and process
// group signals do not reach it.
func TestOwnSession(t *testing.T) {
	cmd := exec.Command("sh", "-c", "ps -o sid= -p $$")
	Set(cmd)
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("ps: %v", err)
	}
	sid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("ps said %q", out)
	}
	own, err := exec.Command("ps", "-o", "sid=", "-p", strconv.Itoa(os.Getpid())).Output()
	if err != nil {
		t.Skipf("ps: %v", err)
	}
	if strings.TrimSpace(string(own)) == strconv.Itoa(sid) || sid != cmd.Process.Pid {
		t.Errorf("the child's session is %d (the caller's %d, the child %d): want a session of its own", sid, own, cmd.Process.Pid)
	}
}
