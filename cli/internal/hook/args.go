package hook

import (
	"os/user"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// Usage is the guard command line ParseArgs reads: the forms agents' hook configurations use.
const Usage = "[--workspace DIR] [--state-dir DIR] [--json] guard [--checkpoint] [JSON]"

// ParseArgs reads a guard command line (Usage) without a command-line library: agents' hooks run
// it before and after every tool call, one process each, and building a command model costs
// more than the guard's decision. It takes exactly what agent-rewind's kong parser takes to the
// same values (FuzzGuardArgs in cli/internal/command checks it), and declines (ok false) every
// other form: help, other flags, "--", a second argument... Relative paths are taken from wd,
// the caller's working directory, which becomes c.Dir. stateDir is --state-dir, absolute, or ""
// when not given.
func ParseArgs(args []string, wd string) (c Call, stateDir string, ok bool) {
	c.Workspace, c.Dir = ".", wd
	seenGuard, seenArg := false, false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--json":
			c.JSON = true
		case a == "--workspace" && i+1 < len(args) && (args[i+1] == "" || PlainValue(args[i+1])):
			c.WorkspaceFlag, c.WorkspaceSet = args[i+1], true
			i++
		case strings.HasPrefix(a, "--workspace=") && (a == "--workspace=" || PlainValue(a[len("--workspace="):])):
			c.WorkspaceFlag, c.WorkspaceSet = a[len("--workspace="):], true
		case a == "--state-dir" && i+1 < len(args) && PlainValue(args[i+1]):
			stateDir = args[i+1]
			i++
		case strings.HasPrefix(a, "--state-dir=") && PlainValue(a[len("--state-dir="):]):
			stateDir = a[len("--state-dir="):]
		case a == "guard" && !seenGuard:
			seenGuard = true
		case a == "--checkpoint" && seenGuard:
			c.Checkpoint = true
		case seenGuard && !seenArg && PlainValue(a):
			c.Input, seenArg = a, true
		default:
			return Call{}, "", false
		}
	}
	if !seenGuard {
		return Call{}, "", false
	}
	switch {
	case c.WorkspaceSet && c.WorkspaceFlag == "":
		c.Workspace = "" // as kong leaves it; the guard ignores an empty --workspace and says so
	case c.WorkspaceSet:
		c.Workspace = expandPath(c.WorkspaceFlag, wd)
	default:
		c.Workspace = expandPath(".", wd)
	}
	if stateDir != "" {
		stateDir = expandPath(stateDir, wd)
	}
	return c, stateDir, true
}

// PlainValue reports whether a is a value kong takes as it is: not empty, not a flag, and valid
// UTF-8 (kong replaces invalid bytes with U+FFFD).
func PlainValue(a string) bool { return a != "" && !strings.HasPrefix(a, "-") && utf8.ValidString(a) }

// expandPath makes path absolute (from wd), with a leading "~/" the user's home, as kong's
// "path" type does (kong.ExpandPath).
func expandPath(path, wd string) string {
	if filepath.IsAbs(path) {
		return path
	}
	if strings.HasPrefix(path, "~/") {
		u, err := user.Current()
		if err != nil {
			return path
		}
		return filepath.Join(u.HomeDir, path[2:])
	}
	return filepath.Join(wd, path)
}
