//go:build unix

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
