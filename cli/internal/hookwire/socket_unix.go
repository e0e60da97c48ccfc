//go:build unix

package hookwire

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/agent-rewind/rewind/cli/internal/trust"
)

// maxSockPath is below the 108 bytes a unix socket's path may have (sun_path).
const maxSockPath = 100

// SockName returns a name for the socket path usable by bind and connect, and a function to
// call once done with it: a path too long for a socket is reached through an open descriptor of
// its folder (/proc/self/fd/N/name, Linux).
func SockName(path string) (string, func(), error) {
	if len(path) <= maxSockPath {
		return path, func() {}, nil
	}
	fd, err := syscall.Open(filepath.Dir(path), syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return "", nil, &os.PathError{Op: "open", Path: filepath.Dir(path), Err: err}
	}
	return "/proc/self/fd/" + strconv.Itoa(fd) + "/" + filepath.Base(path), func() { syscall.Close(fd) }, nil
}

// Dial connects to the unix socket at path, with raw system calls (the client links no net),
// and returns the connection, closed on exec. Reads time out after timeout
// seconds (SO_RCVTIMEO). A server that runs as another user is refused (trust.Peer) before
// anything is sent to it.
func Dial(path string, timeout int64) (Conn, error) {
	name, done, err := SockName(path)
	if err != nil {
		return -1, err
	}
	defer done()
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return -1, err
	}
	syscall.CloseOnExec(fd)
	if err := syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &syscall.Timeval{Sec: timeout}); err != nil {
		syscall.Close(fd)
		return -1, err
	}
	for {
		err = syscall.Connect(fd, &syscall.SockaddrUnix{Name: name})
		if err != syscall.EINTR {
			break
		}
	}
	if err == nil {
		err = trust.Peer(fd, path)
	}
	if err != nil {
		syscall.Close(fd)
		return -1, err
	}
	return Conn(fd), nil
}

// Conn is a connection's descriptor as an io.Reader and io.Writer, without the runtime's
// poller (the client waits on nothing else). A read that times out is syscall.EAGAIN.
type Conn int

// Close closes the connection.
func (c Conn) Close() error { return syscall.Close(int(c)) }

func (c Conn) Read(p []byte) (int, error) {
	for {
		n, err := syscall.Read(int(c), p)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		if n == 0 && len(p) > 0 {
			return 0, io.EOF
		}
		return n, nil
	}
}

// Write writes all of p.
func (c Conn) Write(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		n, err := syscall.Write(int(c), p[done:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return done, err
		}
		done += n
	}
	return done, nil
}
