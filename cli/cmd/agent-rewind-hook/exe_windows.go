package main

import (
	"os"
	"strings"
)

// exeSuffix ends the names of programs.
const exeSuffix = ".exe"

// executable reports whether p is a regular file named as a program (Windows has no
// executable bit: what runs is told by the name).
func executable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && strings.EqualFold(p[max(0, len(p)-4):], exeSuffix)
}

// umask is 0: Windows has none (what the guard creates gets its folder's access list).
func umask() uint32 { return 0 }
