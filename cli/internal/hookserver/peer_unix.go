//go:build unix

package hookserver

import (
	"net"
	"syscall"

	"github.com/agent-rewind/rewind/cli/internal/unixsock"
)

// ownPeer reports whether the process at the other end of c runs as the user served (its uid,
// SO_PEERCRED or getpeereid).
func (s *server) ownPeer(c net.Conn) bool {
	uid, err := unixsock.PeerUID(c)
	return err == nil && uid == s.uid
}

// readUmask returns the process's file-creation mask (reading it means setting it: at start,
// before any file is created).
func readUmask() uint32 {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return uint32(m)
}
