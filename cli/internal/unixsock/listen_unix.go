//go:build unix

package unixsock

import (
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/agent-rewind/rewind/cli/internal/hookwire"
	"github.com/agent-rewind/rewind/cli/internal/trust"
)

// Listen listens on the unix socket at path, however long the path, replacing a socket file a
// dead server left: the caller holds the server's Lock, so no live server owns it. Closing the
// listener leaves the file; the server removes it only while it is still its own. A folder
// another user could change is refused (trust.Folder): they could put their socket in its place.
func Listen(path string) (net.Listener, error) {
	if err := trust.Folder(filepath.Dir(path)); err != nil {
		return nil, err
	}
	os.Remove(path)
	name, done, err := hookwire.SockName(path)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("unix", name)
	done()
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	u := ln.(*net.UnixListener)
	u.SetUnlinkOnClose(false)
	return u, nil
}
