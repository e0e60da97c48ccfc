package trust

import (
	"errors"
	"syscall"
)

// LOCAL_PEERCRED of SOL_LOCAL (sys/un.h), which package syscall does not name.
const (
	solLocal      = 0
	localPeercred = 1
)

// PeerUID returns the uid of the process at the other end of the unix socket fd
// (LOCAL_PEERCRED, struct xucred). Package syscall has no getsockopt for a struct xucred, and
// golang.org/x/sys would weigh on the hook client; the kernel copies the first bytes of the
// struct into a shorter buffer, so a 32-byte one (the size of an ICMPv6Filter, eight uint32)
// receives cr_version and cr_uid, the first two fields.
func PeerUID(fd int) (int, error) {
	v, err := syscall.GetsockoptICMPv6Filter(fd, solLocal, localPeercred)
	if err != nil {
		return -1, err
	}
	if v.Filt[0] != 0 { // XUCRED_VERSION
		return -1, errors.New("LOCAL_PEERCRED: unknown struct xucred version")
	}
	return int(v.Filt[1]), nil
}
