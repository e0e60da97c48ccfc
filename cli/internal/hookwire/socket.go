package hookwire

import (
	"errors"
	"path/filepath"

	"github.com/agent-rewind/rewind/cli/internal/statebase"
)

// Folder is the guard server's folder in the state base: sock (its socket) and lock (held while
// it runs, so that one runs per user and state base).
const Folder = "hook-server"

// ErrRelativeState reports a relative REWIND_STATE_DIR: the client and the server would resolve
// it against different working directories, so no server is used.
var ErrRelativeState = errors.New(statebase.Env + " is relative")

// Socket returns the server's socket path for the environment getenv reads.
func Socket(getenv func(string) string) (string, error) {
	base, err := statebase.Dir(getenv)
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(base) {
		return "", ErrRelativeState
	}
	return filepath.Join(base, Folder, "sock"), nil
}

// Switches in the environment.
const (
	// ServerEnv set to "off" makes agent-rewind-hook always run the full guard itself.
	ServerEnv = "REWIND_HOOK_SERVER"
	// ClientEnv is set by agent-rewind-hook on the full guard it runs instead of being served:
	// to StartServer when no server answered, so that the guard starts one for the next calls,
	// to NoStart when a server answered "fall back".
	ClientEnv = "REWIND_HOOK_CLIENT"
)

// ClientEnv's values.
const (
	StartServer = "start"
	NoStart     = "fallback"
)
