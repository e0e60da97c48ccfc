package trust

import (
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

// The process ids at the ends of a named pipe (kernel32, Windows Vista and later; Wine 8 has
// them too): Windows has no uid to ask for, so the peer's user is its process's token's.
var (
	kernel32                        = syscall.NewLazyDLL("kernel32.dll")
	procGetNamedPipeServerProcessId = kernel32.NewProc("GetNamedPipeServerProcessId")
	procGetNamedPipeClientProcessId = kernel32.NewProc("GetNamedPipeClientProcessId")
)

// Peer checks that the process at the other end of fd, a named pipe's client handle connected
// to the server at path (hookwire.PipeName), runs as this user: a client must not hand its
// request (its environment, its input) to, nor take an answer from, a server another user
// started.
func Peer(fd int, path string) error {
	pid, err := pipePID(procGetNamedPipeServerProcessId, fd)
	if err != nil {
		return &os.PathError{Op: "read the server's process id on", Path: path, Err: err}
	}
	return ownProcess(pid, path, "the server listening there")
}

// ClientPeer checks that the process at the other end of fd, a server's instance of the named
// pipe for path, runs as this user: a server serves only its own user's connections.
func ClientPeer(fd int, path string) error {
	pid, err := pipePID(procGetNamedPipeClientProcessId, fd)
	if err != nil {
		return &os.PathError{Op: "read the client's process id on", Path: path, Err: err}
	}
	return ownProcess(pid, path, "the client connected there")
}

// pipePID asks proc (GetNamedPipeServerProcessId or GetNamedPipeClientProcessId) for the
// process id at the other end of the pipe handle fd.
func pipePID(proc *syscall.LazyProc, fd int) (uint32, error) {
	var pid uint32
	if r, _, err := proc.Call(uintptr(fd), uintptr(unsafe.Pointer(&pid))); r == 0 {
		return 0, err
	}
	return pid, nil
}

// ownProcess checks that process pid, who is at the other end of path's pipe, runs as this
// user.
func ownProcess(pid uint32, path, who string) error {
	sid, err := processUser(pid)
	if err != nil {
		return &os.PathError{Op: "read the user of process " + strconv.FormatUint(uint64(pid), 10) + " on", Path: path, Err: err}
	}
	y, err := self()
	if err != nil {
		return &os.PathError{Op: "read this process's user for", Path: path, Err: err}
	}
	if sid != y.user {
		return &Error{Path: path, What: who + " (process " + strconv.FormatUint(uint64(pid), 10) + ") runs as " + name(sid) + ", not as you (" + name(y.user) + ")",
			Fix: "nothing was sent to it; find who runs it (tasklist /v /fi \"PID eq " + strconv.FormatUint(uint64(pid), 10) + "\"), and use a state folder of your own"}
	}
	return nil
}

// User returns the SID of the user this process runs as (its token's user), for an access
// list that admits this user alone.
func User() (string, error) {
	y, err := self()
	return y.user, err
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
