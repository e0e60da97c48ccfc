//go:build unix

package hookserver

import (
	"errors"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/cli/internal/hookwire"
	"github.com/agent-rewind/rewind/cli/internal/unixsock"
)

// TestPeerUID: a connection from another uid than the one served is closed unanswered.
func TestPeerUID(t *testing.T) {
	socket := serve(t, os.Getuid()+1)
	if as := ask(t, socket, &hookwire.Request{Op: hookwire.OpStatus}); len(as) != 0 {
		t.Fatalf("a stranger got %d answers", len(as))
	}
	uid, err := func() (int, error) {
		c, err := unixsock.Dial(socket, 5*time.Second)
		if err != nil {
			return 0, err
		}
		defer c.Close()
		return unixsock.PeerUID(c)
	}()
	if err != nil || uid != os.Getuid() {
		t.Fatalf("unixsock.PeerUID: %d, %v; want %d", uid, err, os.Getuid())
	}
}

// closedUnread reports whether a write or read failed because the server closed the
// connection without reading all that was sent.
func closedUnread(err error) bool {
	return errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)
}
