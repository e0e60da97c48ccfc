package unixsock

import (
	"errors"
	"net"

	"github.com/agent-rewind/rewind/cli/internal/trust"
)

// Peer checks that the client at the other end of c, a connection a server accepted (Listen),
// runs as this user (its process's token's user: Windows has no uid, trust.ClientPeer): a
// server serves only its own user's connections, as a client (Dial) trusts only its own
// user's server.
func Peer(c net.Conn) error {
	h, err := handle(c)
	if err != nil {
		return err
	}
	return trust.ClientPeer(h, c.LocalAddr().String())
}

// handle returns the pipe handle of c, a connection of Listen or Dial (go-winio's).
func handle(c net.Conn) (int, error) {
	f, ok := c.(interface{ Fd() uintptr })
	if !ok {
		return 0, errors.New("not a named pipe connection")
	}
	return int(f.Fd()), nil
}
