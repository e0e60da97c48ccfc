package unixsock

import "net"

// peer is what a server asks of a connection it accepted: its client runs as this user.
func peer(c net.Conn) error { return Peer(c) }
