package unixsock

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/Microsoft/go-winio"

	"github.com/agent-rewind/rewind/cli/internal/hookwire"
	"github.com/agent-rewind/rewind/cli/internal/trust"
)

// busyFor is how long Dial retries a pipe whose instances are all taken when its caller sets
// no timeout: a server starts another acceptor as soon as calls overlap.
const busyFor = 2 * time.Second

// Dial connects to the server of the socket at path, on the named pipe that stands for it
// (Listen), once it trusts the folder (trust.Folder) and then the server on it (trust.Peer):
// a refusal matches trust.ErrUntrusted and says what to do. No file at path, or no pipe, is
// ErrNoServer; a pipe busy for the whole timeout is another error.
func Dial(path string, timeout time.Duration) (net.Conn, error) {
	if err := trust.Folder(filepath.Dir(path)); err != nil {
		return nil, err
	}
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		return nil, ErrNoServer
	}
	name, err := hookwire.PipeName(path)
	if err != nil {
		return nil, err
	}
	if timeout <= 0 {
		timeout = busyFor
	}
	c, err := winio.DialPipe(name, &timeout)
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNoServer
	} else if errors.Is(err, winio.ErrTimeout) {
		return nil, fmt.Errorf("reach the server of %s: every instance of its pipe %s stayed busy for %s: %w", path, name, timeout, err)
	} else if err != nil {
		return nil, err
	}
	h, err := handle(c)
	if err == nil {
		err = trust.Peer(h, path)
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}
