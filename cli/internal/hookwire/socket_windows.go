package hookwire

import (
	"io"
	"os"
	"syscall"
	"time"
	"unsafe"

	"github.com/agent-rewind/rewind/cli/internal/trust"
)

// Errors of pipe handles (winerror.h).
const (
	errorPipeBusy         = syscall.Errno(231)
	errorBrokenPipe       = syscall.Errno(109)
	errorPipeNotConnected = syscall.Errno(233)
	errorOperationAborted = syscall.Errno(995)
)

// busyFor bounds the retries of a pipe whose instances are all taken: the server starts
// another acceptor as soon as calls overlap.
const busyFor = 2 * time.Second

var (
	kernel32                = syscall.NewLazyDLL("kernel32.dll")
	procCreateEventW        = kernel32.NewProc("CreateEventW")
	procGetOverlappedResult = kernel32.NewProc("GetOverlappedResult")
)

// Dial connects to the server of the socket at path, on its named pipe (PipeName), with raw
// calls (the client links no net). Reads and writes time out after timeout seconds. A server
// that runs as another user is refused (trust.Peer) before anything is sent to it.
func Dial(path string, timeout int64) (Conn, error) {
	name, err := PipeName(path)
	if err != nil {
		return Conn{}, err
	}
	h, err := OpenPipe(name)
	for deadline := time.Now().Add(busyFor); err == errorPipeBusy && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
		h, err = OpenPipe(name)
	}
	if err != nil {
		return Conn{}, &os.PathError{Op: "open the pipe " + name + " of", Path: path, Err: err}
	}
	if err := trust.Peer(int(h), path); err != nil {
		syscall.CloseHandle(h)
		return Conn{}, err
	}
	ev, _, err := procCreateEventW.Call(0, 1, 0, 0) // manual reset, as overlapped I/O wants
	if ev == 0 {
		syscall.CloseHandle(h)
		return Conn{}, err
	}
	return Conn{h: h, ev: syscall.Handle(ev), timeout: uint32(timeout * 1000)}, nil
}

// Conn is a named pipe's client handle as an io.Reader and io.Writer, without the runtime's
// poller (the client waits on nothing else): overlapped reads and writes, each waited for up
// to the timeout. A read that times out is syscall.EAGAIN, as on Unix.
type Conn struct {
	h, ev   syscall.Handle
	timeout uint32 // milliseconds
}

// io runs one overlapped read or write (op: syscall.ReadFile or WriteFile) and waits for it;
// one that does not end within the timeout is cancelled, and is syscall.EAGAIN.
func (c Conn) io(op func(syscall.Handle, []byte, *uint32, *syscall.Overlapped) error, p []byte) (int, error) {
	o := syscall.Overlapped{HEvent: c.ev}
	var n uint32
	err := op(c.h, p, &n, &o)
	if err == syscall.ERROR_IO_PENDING {
		if w, _ := syscall.WaitForSingleObject(c.ev, c.timeout); w != syscall.WAIT_OBJECT_0 {
			syscall.CancelIoEx(c.h, &o)
		}
		err = nil
	}
	if err == nil {
		// Waits for the end (after a cancel, too: o and p must outlive the operation).
		if r, _, e := procGetOverlappedResult.Call(uintptr(c.h), uintptr(unsafe.Pointer(&o)), uintptr(unsafe.Pointer(&n)), 1); r == 0 {
			err = e
		}
	}
	switch err {
	case nil:
		return int(n), nil
	case errorOperationAborted:
		return int(n), syscall.EAGAIN
	case errorBrokenPipe, errorPipeNotConnected:
		return int(n), io.EOF
	}
	return int(n), err
}

func (c Conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, err := c.io(syscall.ReadFile, p[:min(len(p), 1<<30)])
	if err == nil && n == 0 {
		return 0, io.EOF
	}
	return n, err
}

// Write writes all of p.
func (c Conn) Write(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		n, err := c.io(syscall.WriteFile, p[done:min(len(p), done+1<<30)])
		done += n
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// Close closes the connection.
func (c Conn) Close() error {
	syscall.CloseHandle(c.ev)
	return syscall.CloseHandle(c.h)
}
