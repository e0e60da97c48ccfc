package watch

import (
	"path/filepath"

	"github.com/agent-rewind/rewind/cli/internal/hookwire"
)

// sockName returns a name for the socket in store usable by bind and connect, and a function to
// call once done with it (hookwire.SockName: a path too long for a socket is reached through an
// open descriptor of its folder).
func sockName(store string) (string, func(), error) {
	return hookwire.SockName(filepath.Join(dir(store), "sock"))
}
