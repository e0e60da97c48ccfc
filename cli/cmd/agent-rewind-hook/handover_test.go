package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/cli/internal/hookwire"
	"github.com/agent-rewind/rewind/internal/winpath"
)

// The test binary, copied under these names, is the hook client itself (main) and a stand-in
// for agent-rewind that says what it was given: its arguments, ClientEnv, its standard input.
func TestMain(m *testing.M) {
	switch strings.TrimSuffix(filepath.Base(os.Args[0]), exeSuffix) {
	case "agent-rewind-hook":
		main()
	case "agent-rewind":
		in, _ := io.ReadAll(os.Stdin)
		os.Stdout.WriteString("args=" + strings.Join(os.Args[1:], " ") + "\nclient=" + os.Getenv(hookwire.ClientEnv) + "\nstdin=" + strconv.Itoa(len(in)) + " " + string(in[:min(len(in), 40)]) + "\n")
		os.Exit(3)
	}
	os.Exit(m.Run())
}

// copyAs copies the running test binary into dir as name (with the system's suffix).
func copyAs(t *testing.T, dir, name string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name+exeSuffix)
	if err := os.WriteFile(p, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// run runs the hook client with env added and stdin, and returns its output and exit code.
func run(t *testing.T, hook string, stdin []byte, env ...string) (stdout, stderr string, code int) {
	t.Helper()
	var cmd *exec.Cmd
	var out, errOut strings.Builder
	var err error
	for try := 0; ; try++ {
		cmd = exec.Command(hook, "guard", "--checkpoint")
		cmd.Env = append(os.Environ(), env...)
		cmd.Stdin = bytes.NewReader(stdin)
		out.Reset()
		errOut.Reset()
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err = cmd.Run()
		// Wine 8 under load sometimes fails to start a just-written program ("Internal error"
		// from CreateProcess, once in a full .ci/run): the program never ran, so it is run again.
		if err == nil || cmd.Process != nil || try == 2 || !winpath.UnderWine() {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}

// TestHandOver: with no guard server, the client becomes agent-rewind beside it, with its
// arguments, the standard input it read (small, or larger than a pipe holds) and ClientEnv
// saying to start a server, and exits with its code; with REWIND_HOOK_SERVER=off, without
// reading its input. A state folder that is not one fails closed, and so does a client with
// no agent-rewind to become.
func TestHandOver(t *testing.T) {
	bin := t.TempDir()
	hook := copyAs(t, bin, "agent-rewind-hook")
	copyAs(t, bin, "agent-rewind")
	state := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	stateEnv := "REWIND_STATE_DIR=" + state
	input := `{"tool_name":"Bash"}`
	out, errOut, code := run(t, hook, []byte(input), stateEnv, hookwire.ServerEnv+"=")
	if want := "args=guard --checkpoint\nclient=start\nstdin=20 " + input + "\n"; code != 3 || out != want {
		t.Fatalf("no server: exit %d\n%q\nwant\n%q\n%s", code, out, want, errOut)
	}
	big := bytes.Repeat([]byte("x"), 100<<10)
	if out, errOut, code := run(t, hook, big, stateEnv, hookwire.ServerEnv+"="); code != 3 || !strings.Contains(out, "stdin=102400 xxx") {
		t.Fatalf("100 KiB of input: exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code := run(t, hook, []byte(input), stateEnv, hookwire.ServerEnv+"=off"); code != 3 || !strings.Contains(out, "client=fallback\nstdin=20 "+input) {
		t.Fatalf("REWIND_HOOK_SERVER=off: exit %d\n%s%s", code, out, errOut)
	}

	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o600)
	if out, errOut, code := run(t, hook, []byte(input), "REWIND_STATE_DIR="+file, hookwire.ServerEnv+"="); code != 2 || !strings.Contains(errOut, "state folder is not safe to use") || out != "" {
		t.Fatalf("a file as the state folder: exit %d\n%s%s", code, out, errOut)
	}
	alone := copyAs(t, t.TempDir(), "agent-rewind-hook")
	if _, errOut, code := run(t, alone, []byte(input), stateEnv, hookwire.ServerEnv+"=", "PATH="); code != 2 || !strings.Contains(errOut, "agent-rewind is neither beside") {
		t.Fatalf("no agent-rewind: exit %d\n%s", code, errOut)
	}
}
