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
	err = rc.Read(func(fd uintptr) bool {
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		q = err == syscall.EAGAIN || err == syscall.EWOULDBLOCK
		return true // never wait for the socket to be readable
	})
	return err == nil && q
}
