package hookwire

import (
	"hash/fnv"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// PipeName returns the named pipe that stands for the socket at path on Windows, where the
// local servers listen on named pipes (Wine 8, the Windows tests run under, has no AF_UNIX
// sockets). It is derived from the path alone, so a server and its clients agree on it without
// reading anything: \\.\pipe\agent-rewind-<FNV-1a 64 of the absolute, lower-cased path, in
// hex>. Windows' paths are case-insensitive; different spellings of one folder (8.3 short
// names, a junction) give different pipes, which no server answers on: the client then runs
// the guard itself. The name is no secret (anyone can list \\.\pipe\): the pipe's access list
// and the peer checks are what keep other users out, so a hash needs no crypto (which the hook
// client must not link).
func PipeName(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	h := fnv.New64a()
	h.Write([]byte(strings.ToLower(abs)))
	sum := strconv.FormatUint(h.Sum64(), 16)
	return `\\.\pipe\agent-rewind-` + strings.Repeat("0", 16-len(sum)) + sum, nil
}

// Flags of a client's pipe handle (winbase.h): overlapped, so that a read can time out, and
// identification only, so that a server of another user cannot act as this one (the default,
// impersonation, would let it).
const (
	securitySQOSPresent    = 0x00100000
	securityIdentification = 0x00010000
)

// OpenPipe opens the client end of the named pipe name once: ERROR_FILE_NOT_FOUND when no
// server made it, ERROR_PIPE_BUSY when none of its instances waits for a client.
func OpenPipe(name string) (syscall.Handle, error) {
	p, err := syscall.UTF16PtrFromString(name)
	if err != nil {
		return syscall.InvalidHandle, err
	}
	syscall.ForkLock.RLock() // not inherited by the processes this one starts
	defer syscall.ForkLock.RUnlock()
	return syscall.CreateFile(p, syscall.GENERIC_READ|syscall.GENERIC_WRITE, 0, nil, syscall.OPEN_EXISTING,
		syscall.FILE_FLAG_OVERLAPPED|securitySQOSPresent|securityIdentification, 0)
}
