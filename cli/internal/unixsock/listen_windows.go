package unixsock

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/Microsoft/go-winio"

	"github.com/agent-rewind/rewind/cli/internal/hookwire"
	"github.com/agent-rewind/rewind/cli/internal/trust"
)

// pipeBuffer is each pipe instance's buffer each way: a request or an answer of a few tens of
// kilobytes is written whole without waiting for the other end to read (with none, Wine 8
// holds every write until the reader reads).
const pipeBuffer = 64 << 10

// taken are what creating a pipe's first instance fails with when the name exists already.
const (
	errorAccessDenied  = syscall.Errno(5)
	errorAlreadyExists = syscall.Errno(183)
	errorPipeBusy      = syscall.Errno(231)
)

// takenFor bounds the wait for a pipe of the same name to go: a server stopping in this
// process (a watcher replaced) may hold it for a moment while its last connection closes.
const takenFor = 2 * time.Second

// Listen listens on the named pipe that stands for the socket at path (hookwire.PipeName),
// and makes the file at path that says a server listens there: clients look for it before
// they connect, and the server stops when it is removed or replaced, as with a unix socket's
// file. A file a dead server left is replaced: the caller holds the server's Lock, so no live
// server owns it. Closing the listener leaves the file; the server removes it only while it is
// still its own. A folder another user could change is refused (trust.Folder).
//
// The pipe's access list admits this user alone, and its first instance is created only if
// no pipe of that name exists (go-winio creates it FILE_CREATE, the native form of
// FILE_FLAG_FIRST_PIPE_INSTANCE): another user cannot make it first and be reached by our
// clients, who check the server's user besides (Dial).
func Listen(path string) (net.Listener, error) {
	if err := trust.Folder(filepath.Dir(path)); err != nil {
		return nil, err
	}
	name, err := hookwire.PipeName(path)
	if err != nil {
		return nil, err
	}
	user, err := trust.User()
	if err != nil {
		return nil, fmt.Errorf("listen on %s: read this process's user: %w", path, err)
	}
	os.Remove(path)
	cfg := &winio.PipeConfig{SecurityDescriptor: "D:P(A;;GA;;;" + user + ")", InputBufferSize: pipeBuffer, OutputBufferSize: pipeBuffer}
	ln, err := winio.ListenPipe(name, cfg)
	for deadline := time.Now().Add(takenFor); taken(err) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		ln, err = winio.ListenPipe(name, cfg)
	}
	if taken(err) {
		return nil, fmt.Errorf("listen on %s: the pipe %s exists already: a server of this state folder still stops, or another user made it first; find who holds it (handle.exe %s), or choose another state folder: %w", path, name, name[len(`\\.\pipe\`):], err)
	} else if err != nil {
		return nil, fmt.Errorf("listen on %s (pipe %s): %w", path, name, err)
	}
	claimFirstInstance(name)
	// O_EXCL: the one removed above is gone, and no other server of this lock makes one.
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err == nil {
		_, err = f.WriteString("a server of agent-rewind listens on the named pipe " + name + "\r\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	return ln, nil
}

// taken reports whether creating a pipe's first instance failed because the name exists.
func taken(err error) bool {
	return errors.Is(err, errorAccessDenied) || errors.Is(err, errorAlreadyExists)
}

// claimFirstInstance connects once to the listener's first instance, which go-winio keeps
// only to hold the name and never connects: Windows leaves it disconnected (the connect is
// busy), Wine 8 waits for a client on it, and a client that reached it there would wait for
// an answer that never comes. Right after ListenPipe it is the pipe's only instance.
func claimFirstInstance(name string) {
	if h, err := hookwire.OpenPipe(name); err == nil {
		syscall.CloseHandle(h)
	}
}
