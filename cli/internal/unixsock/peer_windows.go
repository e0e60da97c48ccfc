package unixsock

import (
	"net"

	"github.com/agent-rewind/rewind/cli/internal/trust"
)

// Peer checks that the process at the other end of c runs as this user (trust.Peer: the peer's
// process id, then its token's user): a server serves only its own user's connections.
func Peer(c net.Conn) error {
	return withFD(c, func(fd int) error { return trust.Peer(fd, c.LocalAddr().String()) })
}
