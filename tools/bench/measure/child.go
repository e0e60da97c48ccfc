package measure

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// ChildResult is one finished child process.
type ChildResult struct {
	Sample
	ExitCode int
	Stdout   []byte
	Stderr   []byte
}

// ErrExit reports a child that exited with a status other than the one expected.
var ErrExit = errors.New("unexpected exit status")

// Child runs cmd to completion and measures its wall time (from start to exit) and peak RSS.
// Stdout and stderr are captured unless cmd already has writers for them. A non-zero exit is not
// an error here: callers check ExitCode (see Run for the common case).
func Child(cmd *exec.Cmd) (ChildResult, error) {
	var out, errb bytes.Buffer
	if cmd.Stdout == nil {
		cmd.Stdout = &out
	}
	if cmd.Stderr == nil {
		cmd.Stderr = &errb
	}
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	var xe *exec.ExitError
	if err != nil && !errors.As(err, &xe) {
		return ChildResult{}, fmt.Errorf("run %s: %w", strings.Join(cmd.Args, " "), err)
	}
	r := ChildResult{Sample: Sample{Wall: wall, MaxRSS: MaxRSS(cmd)}, ExitCode: cmd.ProcessState.ExitCode(), Stdout: out.Bytes(), Stderr: errb.Bytes()}
	return r, nil
}

// Run is Child for a command that must exit 0: any other status is an error (wrapping ErrExit)
// that quotes the command and the end of its stderr.
func Run(cmd *exec.Cmd) (ChildResult, error) {
	r, err := Child(cmd)
	if err != nil {
		return r, err
	}
	if r.ExitCode != 0 {
		return r, fmt.Errorf("%s: %w %d: %s", strings.Join(cmd.Args, " "), ErrExit, r.ExitCode, tail(r.Stderr, 400))
	}
	return r, nil
}

// MaxRSS returns the peak resident set in bytes of cmd's finished process (0 if unknown).
// Linux reports ru_maxrss in KiB, macOS in bytes.
func MaxRSS(cmd *exec.Cmd) int64 {
	if cmd.ProcessState == nil {
		return 0
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		if runtime.GOOS == "darwin" { // the BSDs disagree: macOS reports bytes
			return ru.Maxrss
		}
		return ru.Maxrss * 1024
	}
	return 0
}

// tail returns the last n bytes of b as trimmed text.
func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.TrimSpace(string(b))
}
