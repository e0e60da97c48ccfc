package main

import (
	"io"
	"os"
	"syscall"
)

// stdinIsTerminal reports whether standard input is a console (a character device).
func stdinIsTerminal() bool {
	t, err := syscall.GetFileType(syscall.Stdin)
	return err == nil && t == syscall.FILE_TYPE_CHAR
}

// stdin is standard input.
func stdin() io.Reader { return os.Stdin }
