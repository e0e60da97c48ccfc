//go:build linux && (amd64 || arm64)

package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMCPOnATerminal: "agent-rewind mcp" typed in a terminal says on stderr what it is waiting
// for, which folder it protects and how to leave, and Ctrl-D leaves; with stdin a pipe, as an
// MCP client starts it, it says nothing.
func TestMCPOnATerminal(t *testing.T) {
	dir := t.TempDir()
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	pty, tty := openPTY(t)
	defer pty.Close()
	cmd := exec.Command(bin, "mcp")
	cmd.Dir = dir
	cmd.Env = mcpEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	timer := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() }) // a bound for a hung child, not a timing assertion
	defer timer.Stop()
	if _, err := pty.Write([]byte{4}); err != nil { // Ctrl-D: the end of the terminal's input
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("agent-rewind mcp on a terminal did not leave on Ctrl-D: %v\nstderr:\n%s", err, stderr.String())
	}
	for _, want := range []string{"MCP server", "protecting " + root, "waiting for an MCP client on stdin", "Ctrl-D or Ctrl-C"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr on a terminal lacks %q:\n%s", want, stderr.String())
		}
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout on a terminal: %q", stdout.String())
	}

	// Piped stdin, as an MCP client starts it: nothing on stderr.
	r := run(t, dir, "", "mcp")
	if r.code != 0 || r.stderr != "" || r.stdout != "" {
		t.Errorf("agent-rewind mcp with piped stdin: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}
