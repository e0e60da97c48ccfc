//go:build unix

package unixsock

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/agent-rewind/rewind/cli/internal/hookwire"
	"github.com/agent-rewind/rewind/cli/internal/trust"
)

// Dial connects to the unix socket at path, however long the path (hookwire.SockName), once
// it trusts the socket's folder (trust.Folder) and then the server on it (trust.Peer): a
// refusal matches trust.ErrUntrusted and says what to do.
func Dial(path string, timeout time.Duration) (net.Conn, error) {
	if err := trust.Folder(filepath.Dir(path)); err != nil {
		return nil, err
	}
	// No socket file is no server, whether or not this system could connect to one.
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		return nil, ErrNoServer
	}
	name, done, err := hookwire.SockName(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, ErrNoServer
		}
		return nil, err
	}
	c, err := net.DialTimeout("unix", name, timeout)
	done()
	if errors.Is(err, os.ErrNotExist) || refused(err) {
		return nil, ErrNoServer
	}
	if err != nil {
		return nil, err
	}
	if err := withFD(c, func(fd int) error { return trust.Peer(fd, path) }); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}
