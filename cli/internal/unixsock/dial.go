package unixsock

import (
	"errors"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/agent-rewind/rewind/cli/internal/hookwire"
)

// ErrNoServer is returned by Dial when nothing listens on the socket: no socket file, or one
// that refuses connections (its server is gone).
var ErrNoServer = errors.New("no server listens on the socket")

// Dial connects to the unix socket at path, however long the path (hookwire.SockName).
func Dial(path string, timeout time.Duration) (net.Conn, error) {
	name, done, err := hookwire.SockName(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, ErrNoServer
		}
		return nil, err
	}
	c, err := net.DialTimeout("unix", name, timeout)
	done()
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) {
		return nil, ErrNoServer
	}
	return c, err
}
