package hookwire

import (
	"errors"
	"io"
	"os"
	"syscall"
	"unsafe"

	"github.com/agent-rewind/rewind/cli/internal/trust"
)

// maxSockPath is below the 108 bytes of an AF_UNIX address's path (sun_path, afunix.h).
const maxSockPath = 100

// SockName returns the socket path for bind and connect, and a function to call once done.
// Windows has no /proc/self/fd to reach a longer one through its folder: a path too long is an
// error naming it.
func SockName(path string) (string, func(), error) {
	if len(path) > maxSockPath {
		return "", nil, &os.PathError{Op: "use the socket", Path: path, Err: errTooLong}
	}
	return path, func() {}, nil
}

// errTooLong says what to do about a socket path too long for Windows.
var errTooLong = errors.New("the path is longer than the 100 bytes an AF_UNIX socket's may have on Windows: choose a shorter state folder (--state-dir or REWIND_STATE_DIR)")

// soRcvtimeo is SO_RCVTIMEO (winsock2.h), a DWORD of milliseconds on Windows.
const soRcvtimeo = 0x1006

// wsaETimedOut is what a receive past SO_RCVTIMEO fails with.
const wsaETimedOut = syscall.Errno(10060)

// Dial connects to the AF_UNIX socket at path (Windows 10 1803 and later have them) with raw
// calls (the client links no net), and returns the socket's handle. Reads time out after
// timeout seconds. A server that runs as another user is refused (trust.Peer) before anything
// is sent to it. The handle is not inherited by the processes this one starts.
func Dial(path string, timeout int64) (int, error) {
	name, done, err := SockName(path)
	if err != nil {
		return -1, err
	}
	defer done()
	syscall.ForkLock.RLock()
	h, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(h)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return -1, err
	}
	if err := syscall.SetsockoptInt(h, syscall.SOL_SOCKET, soRcvtimeo, int(timeout*1000)); err != nil {
		syscall.Closesocket(h)
		return -1, err
	}
	err = syscall.Connect(h, &syscall.SockaddrUnix{Name: name})
	if err == nil {
		err = trust.Peer(int(h), path)
	}
	if err != nil {
		syscall.Closesocket(h)
		return -1, err
	}
	return int(h), nil
}

// Conn is a connected socket's handle as an io.Reader and io.Writer, without the runtime's
// poller (the client waits on nothing else): blocking WSARecv and WSASend. A read that times
// out is syscall.EAGAIN, as on Unix.
type Conn int

func (c Conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	buf := syscall.WSABuf{Len: uint32(min(len(p), 1<<30)), Buf: unsafe.SliceData(p)}
	var n, flags uint32
	err := syscall.WSARecv(syscall.Handle(c), &buf, 1, &n, &flags, nil, nil)
	if err == wsaETimedOut {
		return 0, syscall.EAGAIN
	}
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, io.EOF
	}
	return int(n), nil
}

// Write writes all of p.
func (c Conn) Write(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		buf := syscall.WSABuf{Len: uint32(min(len(p)-done, 1<<30)), Buf: &p[done]}
		var n uint32
		if err := syscall.WSASend(syscall.Handle(c), &buf, 1, &n, 0, nil, nil); err != nil {
			return done, err
		}
		done += int(n)
	}
	return done, nil
}

// Close closes the connection.
func (c Conn) Close() error { return syscall.Closesocket(syscall.Handle(c)) }
