//go:build unix

package trust

import (
	"os"
	"strconv"
)

// Peer checks that the process at the other end of fd, a unix socket connected to the server at
// path, runs as this user: a client must not hand its request (its environment, its input) to,
// nor take an answer from, a server another user started.
func Peer(fd int, path string) error {
	uid, err := PeerUID(fd)
	if err != nil {
		return &os.PathError{Op: "read the server's uid on", Path: path, Err: err}
	}
	if uid != os.Getuid() {
		return &Error{Path: path, What: "the server listening there runs as uid " + strconv.Itoa(uid) + ", not as you (uid " + strconv.Itoa(os.Getuid()) + ")",
			Fix: "nothing was sent to it; find who runs it (ss -xp, or lsof " + path + "), and use a state folder of your own"}
	}
	return nil
}
