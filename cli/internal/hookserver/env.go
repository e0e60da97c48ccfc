package hookserver

import (
	"os"
	"strings"

	"github.com/agent-rewind/rewind/cli/internal/hookwire"
)

// envRead reports whether the guard, or the store it opens, may read the variable name:
// agent-rewind's own (REWIND_*: the state folder, the watcher, the automatic checkpoint's
// limit...), the state base's (XDG_*, HOME), and what the standard library reads on their
// behalf (TMPDIR, TZ, USER and LOGNAME for "~/" paths). PATH is not: the server starts
// agent-rewind by its own executable, never by a search. The client's switches are not either.
func envRead(name string) bool {
	switch name {
	case hookwire.ServerEnv, hookwire.ClientEnv:
		return false
	case "HOME", "TMPDIR", "TZ", "USER", "LOGNAME":
		return true
	}
	return strings.HasPrefix(name, "REWIND_") || strings.HasPrefix(name, "XDG_")
}

// readEnv returns the variables of env (os.Environ's form) the guard may read, unset and empty
// alike left out (os.Getenv does not tell them apart).
func readEnv(env []string) map[string]string {
	m := map[string]string{}
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if ok && v != "" && envRead(k) {
			m[k] = v
		}
	}
	return m
}

// envDiffers names a variable the guard may read whose value in env differs from own's ("" when
// none does): the server would then not answer as the client's own guard would.
func envDiffers(own map[string]string, env []string) string {
	theirs := readEnv(env)
	for k, v := range theirs {
		if own[k] != v {
			return k
		}
	}
	for k := range own {
		if _, ok := theirs[k]; !ok {
			return k
		}
	}
	return ""
}

// ownEnv is the server's own environment, as envDiffers compares it.
func ownEnv() map[string]string { return readEnv(os.Environ()) }
