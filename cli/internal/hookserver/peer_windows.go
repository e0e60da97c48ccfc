package hookserver

import (
	"net"

	"github.com/agent-rewind/rewind/cli/internal/unixsock"
)

// ownPeer reports whether the process at the other end of c runs as this user (its token's
// SID: Windows has no uid).
func (s *server) ownPeer(c net.Conn) bool {
	return unixsock.Peer(c) == nil
}

// readUmask is 0: Windows has no file-creation mask (files get their folder's access list).
func readUmask() uint32 { return 0 }
