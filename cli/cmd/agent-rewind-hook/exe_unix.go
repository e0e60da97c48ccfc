//go:build unix

package main

import (
	"os"
	"syscall"
)

// exeSuffix ends the names of programs.
const exeSuffix = ""

// executable reports whether p is a regular file someone may run.
func executable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

// umask is this process's umask, which the server applies to what the guard creates.
func umask() uint32 {
	mask := syscall.Umask(0)
	syscall.Umask(mask)
	return uint32(mask)
}
