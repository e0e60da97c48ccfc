//go:build unix

package unixsock

import "net"

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
