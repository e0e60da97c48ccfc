//go:build unix

package unixsock

import (
	"net"
	"os"
	"strconv"
)

// peer is what a server asks of a connection it accepted: its client runs as this user.
func peer(c net.Conn) error {
	uid, err := PeerUID(c)
	if err == nil && uid != os.Getuid() {
		err = os.ErrPermission
	}
	if err != nil {
		return &os.PathError{Op: "the client's uid " + strconv.Itoa(uid), Path: c.LocalAddr().String(), Err: err}
	}
	return nil
}
