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

// ErrNoLocalAppData is returned on Windows when neither REWIND_STATE_DIR nor an absolute
// LOCALAPPDATA is set.
var ErrNoLocalAppData = errors.New(`%LOCALAPPDATA% is not defined or not absolute (Windows sets it to the user's C:\Users\<name>\AppData\Local; set it, or ` + Env + `)`)

// Dir returns the state base as getenv (os.Getenv, or a request's environment) says:
// $REWIND_STATE_DIR as it is (it may be relative), else the platform's per-user state folder.
// On Windows that is %LOCALAPPDATA%\agent-rewind (local, not roaming: stores are per machine);
// elsewhere $XDG_STATE_HOME/agent-rewind (when absolute, as the XDG spec requires), else
// ~/Library/Application Support/agent-rewind on macOS, ~/.local/state/agent-rewind on the others
// (HOME is what os.UserHomeDir reads on both). XDG is no Windows convention, and Git Bash sets
// HOME to the same profile, so neither is read there.
func Dir(getenv func(string) string) (string, error) {
	if d := getenv(Env); d != "" {
		return d, nil
	}
	if runtime.GOOS == "windows" {
		if l := getenv("LOCALAPPDATA"); filepath.IsAbs(l) {
			return filepath.Join(l, "agent-rewind"), nil
		}
		return "", ErrNoLocalAppData
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
