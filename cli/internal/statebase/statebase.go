package statebase

import (
	"errors"
	"path/filepath"
	"runtime"
)

// Env names the environment variable that chooses where stores live (the --state-dir flag
// sets it).
const Env = "REWIND_STATE_DIR"

// ErrNoHome is returned when neither the state variables nor HOME are set.
var ErrNoHome = errors.New("$HOME is not defined")

// Dir returns the state base as getenv (os.Getenv, or a request's environment) says:
// $REWIND_STATE_DIR as it is (it may be relative), else $XDG_STATE_HOME/agent-rewind (when
// absolute, as the XDG spec requires), else the platform's per-user state folder:
// ~/Library/Application Support/agent-rewind on macOS, ~/.local/state/agent-rewind elsewhere
// (HOME is what os.UserHomeDir reads on both).
func Dir(getenv func(string) string) (string, error) {
	if d := getenv(Env); d != "" {
		return d, nil
	}
	if x := getenv("XDG_STATE_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "agent-rewind"), nil
	}
	home := getenv("HOME")
	if home == "" {
		return "", ErrNoHome
	}
	if runtime.GOOS == "darwin" {
		return filepath.Join(home, "Library", "Application Support", "agent-rewind"), nil
	}
	return filepath.Join(home, ".local", "state", "agent-rewind"), nil
}
