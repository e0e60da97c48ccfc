package main

import (
	"strings"
	"testing"
)

// FuzzParseWorkUses: whatever a go.work holds, the parser returns paths or an error, never
// panics, and every path it returns is clean (no empty or "" entries that would make the
// harness hash the repository root as a module).
func FuzzParseWorkUses(f *testing.F) {
	f.Add("go 1.26\n\nuse (\n\t./cli\n\t./hashchain\n)\n")
	f.Add("use ./a // c\nuse (\n\"./b\"\n)\n")
	f.Add("use (\n)\n)\nuse")
	f.Fuzz(func(t *testing.T, s string) {
		mods, err := parseWorkUses(strings.NewReader(s))
		if err != nil {
			return
		}
		for _, m := range mods {
			if m == "" {
				t.Fatalf("empty module path from %q", s)
			}
		}
	})
}
