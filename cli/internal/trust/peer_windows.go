package trust

import (
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

// sioAFUnixGetPeerPID is SIO_AF_UNIX_GETPEERPID (_WSAIOR(IOC_VENDOR, 256), afunix.h): the
// process id at the other end of an AF_UNIX socket, as it was when the connection was made.
// Windows has no uid to ask for; the peer's user is that process's token's.
const sioAFUnixGetPeerPID = 0x58000100

// Peer checks that the process at the other end of fd, an AF_UNIX socket (its handle)
// connected to the server at path, runs as this user: a client must not hand its request (its
// environment, its input) to, nor take an answer from, a server another user started.
func Peer(fd int, path string) error {
	var pid uint32
	var n uint32
	if err := syscall.WSAIoctl(syscall.Handle(fd), sioAFUnixGetPeerPID, nil, 0, (*byte)(unsafe.Pointer(&pid)), 4, &n, nil, 0); err != nil {
		return &os.PathError{Op: "read the server's process id on", Path: path, Err: err}
	}
	sid, err := processUser(pid)
	if err != nil {
		return &os.PathError{Op: "read the user of the server (process " + strconv.FormatUint(uint64(pid), 10) + ") on", Path: path, Err: err}
	}
	y, err := self()
	if err != nil {
		return &os.PathError{Op: "read this process's user for", Path: path, Err: err}
	}
	if sid != y.user {
		return &Error{Path: path, What: "the server listening there (process " + strconv.FormatUint(uint64(pid), 10) + ") runs as " + name(sid) + ", not as you (" + name(y.user) + ")",
			Fix: "nothing was sent to it; find who runs it (tasklist /v /fi \"PID eq " + strconv.FormatUint(uint64(pid), 10) + "\"), and use a state folder of your own"}
	}
	return nil
}

// processUser returns the SID of the user process pid runs as (its token's user). Reading
// another user's process needs only PROCESS_QUERY_LIMITED_INFORMATION, which Windows grants
// to anyone but for protected processes.
func processUser(pid uint32) (string, error) {
	const processQueryLimitedInformation = 0x1000
	p, err := syscall.OpenProcess(processQueryLimitedInformation, false, pid)
	if err != nil {
		return "", err
	}
	defer syscall.CloseHandle(p)
	var t syscall.Token
	if err := syscall.OpenProcessToken(p, syscall.TOKEN_QUERY, &t); err != nil {
		return "", err
	}
	defer t.Close()
	u, err := t.GetTokenUser()
	if err != nil {
		return "", err
	}
	return u.User.Sid.String()
}
