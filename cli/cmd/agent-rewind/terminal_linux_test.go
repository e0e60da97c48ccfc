//go:build linux && (amd64 || arm64)

package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// openPTY opens a pseudo-terminal pair: what the child writes to tty, the test reads from pty.
func openPTY(t *testing.T) (pty, tty *os.File) {
	t.Helper()
	pty, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	const tiocsptlck, tiocgptn = 0x40045431, 0x80045430 // asm-generic ioctls (amd64, arm64)
	var unlock int32
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, pty.Fd(), tiocsptlck, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Skipf("unlockpt: %v", e)
	}
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, pty.Fd(), tiocgptn, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Skipf("ptsname: %v", e)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open the terminal side: %v", err)
	}
	return pty, tty
}

// TestListOnATerminal: on a terminal, list draws the timeline as a graph without being asked.
func TestListOnATerminal(t *testing.T) {
	dir := t.TempDir()
	bash(t, dir, "printf 'a\\n' > a.txt")
	a := jsonOK[cpOut](t, dir, "checkpoint", "A")
	bash(t, dir, "printf 'b\\n' > a.txt")
	jsonOK[cpOut](t, dir, "checkpoint", "B")
	bash(t, dir, "printf 'unsaved\\n' > a.txt") // so the rewind takes a new safety checkpoint
	rw := jsonOK[restoreOut](t, dir, "rewind", a.ID)
	bash(t, dir, "printf 'c\\n' > c.txt")
	c := jsonOK[cpOut](t, dir, "checkpoint", "C")

	pty, tty := openPTY(t)
	defer pty.Close()
	cmd := exec.Command(bin, "list")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = tty, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close() // the child has its own copy; the reader sees EOF (EIO) once it exits
	out, _ := io.ReadAll(pty)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("list on a terminal: %v: %s", err, stderr.String())
	}
	lines := strings.Split(strings.ReplaceAll(string(out), "\r\n", "\n"), "\n")
	// The newest branch on top in the left lane, the current position marked; the line that
	// led to the rewind (B, then its safety checkpoint) in a lane of its own, joining A.
	want := []struct{ prefix, id string }{{"@", c.ID}, {"| *", rw.Safety}, {"| *", rw.From}, {"|/", ""}, {"*", a.ID}}
	if len(lines) < len(want) {
		t.Fatalf("list on a terminal:\n%s", out)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w.prefix) || !strings.Contains(lines[i], w.id) {
			t.Fatalf("line %d of list on a terminal is %q, want %q ... %s:\n%s", i+1, lines[i], w.prefix, w.id, out)
		}
	}
	if !strings.Contains(lines[1], "[safety] before rewind to "+a.ID) {
		t.Fatalf("the safety checkpoint is not labelled: %q", lines[1])
	}
}
