package watch

import (
	"path/filepath"

	"github.com/agent-rewind/rewind/cli/internal/hookwire"
)

// sockPath is the watcher's socket in store.
func sockPath(store string) string { return filepath.Join(dir(store), "sock") }

// sockName returns a name for the socket in store usable by bind, and a function to call once
// done with it (hookwire.SockName: a path too long for a socket is reached through an open
// descriptor of its folder).
func sockName(store string) (string, func(), error) {
	return hookwire.SockName(sockPath(store))
}
