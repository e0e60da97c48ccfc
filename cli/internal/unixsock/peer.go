package unixsock

import (
	"net"

	"github.com/agent-rewind/rewind/cli/internal/trust"
)

// PeerUID returns the uid of the process at the other end of c (trust.PeerUID): a server
// serves only its own user's connections, as a client (Dial) trusts only its own user's server.
func PeerUID(c net.Conn) (int, error) {
	uid := -1
	err := withFD(c, func(fd int) (err error) {
		uid, err = trust.PeerUID(fd)
		return err
	})
	return uid, err
}

// withFD calls fn with the descriptor of c, a unix socket connection.
func withFD(c net.Conn, fn func(fd int) error) error {
	raw, err := c.(*net.UnixConn).SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := raw.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}
