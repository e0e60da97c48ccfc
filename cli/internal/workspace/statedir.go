package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agent-rewind/rewind/cli/internal/statebase"
)

// StateDirEnv names the environment variable that chooses where stores live (the --state-dir
// flag sets it). Before stores left the workspace it held only the chains' anchors; it now
// holds the stores as well, and the anchors beside them.
const StateDirEnv = statebase.Env

// StateBase returns the folder that holds every workspace's store: $REWIND_STATE_DIR, else
// $XDG_STATE_HOME/agent-rewind (when absolute, as the XDG spec requires), else the platform's
// per-user state folder: ~/Library/Application Support/agent-rewind on macOS,
// ~/.local/state/agent-rewind elsewhere. It reads the environment and nothing else.
func StateBase() (string, error) {
	d, err := statebase.Dir(os.Getenv)
	if err != nil {
		return "", fmt.Errorf("no folder for agent-rewind's stores: %w (set %s or HOME)", err, StateDirEnv)
	}
	return filepath.Abs(d)
}

// InState reports whether path is inside agent-rewind's state: the state base (every store and
// anchor) or a legacy .rewind/ folder. Signing keys are refused there: they must not live with
// the state they sign.
func InState(path string) bool {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	if slices.Contains(strings.Split(abs, string(filepath.Separator)), LegacyDir) {
		return true
	}
	base, err := StateBase()
	if err != nil {
		return false
	}
	if resolved, err := filepath.EvalSymlinks(base); err == nil {
		if within(resolvedPath(abs), resolved) {
			return true
		}
	}
	return within(abs, base)
}

// resolvedPath resolves the symlinks of path's longest existing prefix.
func resolvedPath(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	if parent := filepath.Dir(path); parent != path {
		return filepath.Join(resolvedPath(parent), filepath.Base(path))
	}
	return path
}
