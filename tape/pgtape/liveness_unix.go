//go:build linux || darwin

package pgtape

import (
	"crypto/tls"
	"net"
	"syscall"
)

// quiet reports whether nothing waits to be read on c's socket, nor its end: an idle connection
// the server has not closed. It never waits.
func quiet(c net.Conn) bool {
	if t, ok := c.(*tls.Conn); ok {
		c = t.NetConn()
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var b [1]byte
	q := false
	// Control, not Read: pgx's background reader may be blocked in a Read of this idle
	// connection, holding the read lock until the server speaks.
	err = rc.Control(func(fd uintptr) {
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		q = err == syscall.EAGAIN || err == syscall.EWOULDBLOCK
	})
	return err == nil && q
}
