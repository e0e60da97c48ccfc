package trust

import "syscall"

// PeerUID returns the uid of the process at the other end of the unix socket fd (SO_PEERCRED:
// the credentials it had when it connected, or, for a client, when the server listened).
func PeerUID(fd int) (int, error) {
	cred, err := syscall.GetsockoptUcred(fd, syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	if err != nil {
		return -1, err
	}
	return int(cred.Uid), nil
}
