//go:build unix

package main

import (
	"os"
	"syscall"

	"github.com/agent-rewind/rewind/cli/internal/hookwire"
)

// stdinIsTerminal reports whether standard input is a terminal (a character device).
func stdinIsTerminal() bool {
	var st syscall.Stat_t
	return syscall.Fstat(0, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFCHR
}

// stdin is standard input read with plain read(2), without the runtime's poller.
func stdin() hookwire.Conn { return hookwire.Conn(0) }

// pipeBytes is the most standard input given back through a pipe: written whole before the
// exec, it must fit the pipe's buffer (64 KiB on Linux, 16 KiB at first on macOS).
const pipeBytes = 16 << 10

// giveBack makes b the process's standard input, for the program it execs: a pipe holding it
// for a hook's usual input, else a temporary file, removed at once, written and rewound.
func giveBack(b []byte) error {
	if len(b) <= pipeBytes {
		var p [2]int
		if err := syscall.Pipe(p[:]); err != nil {
			return err
		}
		if _, err := hookwire.Conn(p[1]).Write(b); err != nil {
			return err
		}
		syscall.Close(p[1])
		if err := dupTo(p[0], 0); err != nil {
			return err
		}
		return syscall.Close(p[0])
	}
	f, err := os.CreateTemp("", "agent-rewind-hook-stdin-")
	if err != nil {
		return err
	}
	os.Remove(f.Name())
	if _, err := f.Write(b); err != nil {
		return err
	}
	if _, err := f.Seek(0, 0); err != nil {
		return err
	}
	if err := dupTo(int(f.Fd()), 0); err != nil {
		return err
	}
	return f.Close()
}
