package main

import (
	"strings"
	"testing"
)

// TestHelpCommand: "agent-rewind help COMMAND..." prints what "COMMAND... --help" prints, and
// exits 0; "help" alone the program's help; a word that names no command is a usage error with a
// suggestion.
func TestHelpCommand(t *testing.T) {
	for _, cmd := range [][]string{{"chain", "verify"}, {"hook-server"}, {"gateway", "keys", "create"}, {}} {
		want := run(t, "", "", append(append([]string{}, cmd...), "--help")...)
		got := run(t, "", "", append([]string{"help"}, cmd...)...)
		if got.code != 0 || want.code != 0 || got.stdout != want.stdout || got.stdout == "" {
			t.Errorf("help %v: exit %d, %q\nwant (from --help): exit %d, %q", cmd, got.code, got.stdout, want.code, want.stdout)
		}
	}
	if r := run(t, "", "", "help", "chain", "verify"); !strings.Contains(r.stdout, "Usage: agent-rewind chain verify") {
		t.Errorf("help chain verify:\n%s", r.stdout)
	}
	if r := run(t, "", "", "help", "chekpoint"); r.code != 80 || !strings.Contains(r.stderr, "did you mean") || !strings.Contains(r.stderr, "checkpoint") {
		t.Errorf("help chekpoint: exit %d\n%s", r.code, r.stderr)
	}
}
