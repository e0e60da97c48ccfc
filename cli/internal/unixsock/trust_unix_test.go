//go:build unix

package unixsock

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/cli/internal/trust"
	"github.com/agent-rewind/rewind/cli/internal/trust/trusttest"
)

// serveEnv makes the test binary listen on the socket it names (run as another user).
const serveEnv = "UNIXSOCK_TEST_SERVE"

func TestMain(m *testing.M) {
	if sock := os.Getenv(serveEnv); sock != "" {
		// What a client sent shows in the test's failure.
		trusttest.Serve(sock, func(c net.Conn) { io.Copy(os.Stderr, c); c.Close() })
	}
	os.Exit(m.Run())
}

// otherServer runs a server as another user on sock (its folder must let them bind there).
func otherServer(t *testing.T, uid, gid int, self, sock string) {
	t.Helper()
	cmd := trusttest.Command(uid, gid, self, "-test.run=^$")
	cmd.Env = append(os.Environ(), serveEnv+"="+sock)
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	var sent strings.Builder
	cmd.Stderr = &sent
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
		if sent.Len() > 0 {
			t.Errorf("the other user's server received %q", sent.String())
		}
	})
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
		t.Fatalf("the other user's server: %q", line)
	}
}

// A client reaches only its own user's server: one another user listens with, in a folder of
// theirs or (bound while it was open to them) in ours, is refused before anything is sent; and
// a server does not listen in a folder another user could change.
func TestDialRefusesAnotherUsersServer(t *testing.T) {
	uid, gid := trusttest.Other(t)
	dir := t.TempDir()
	trusttest.Reachable(t, dir)
	self := trusttest.Self(t, dir)
	theirs := filepath.Join(dir, "theirs")
	os.Mkdir(theirs, 0o700)
	os.Chown(theirs, uid, gid)
	otherServer(t, uid, gid, self, filepath.Join(theirs, "sock"))
	_, err := Dial(filepath.Join(theirs, "sock"), 0)
	if !errors.Is(err, trust.ErrUntrusted) || !strings.Contains(err.Error(), theirs+" cannot be trusted: it is owned by uid "+strconv.Itoa(uid)) {
		t.Fatalf("Dial in their folder: %v", err)
	}
	if _, err := Listen(filepath.Join(theirs, "mine")); !errors.Is(err, trust.ErrUntrusted) {
		t.Fatalf("Listen in their folder: %v", err)
	}

	ours := filepath.Join(dir, "ours")
	os.Mkdir(ours, 0o777)
	os.Chmod(ours, 0o777)
	otherServer(t, uid, gid, self, filepath.Join(ours, "sock"))
	if _, err := Listen(filepath.Join(ours, "mine")); !errors.Is(err, trust.ErrUntrusted) || !strings.Contains(err.Error(), "chmod 700 "+ours) {
		t.Fatalf("Listen in a folder open to everyone: %v", err)
	}
	os.Chmod(ours, 0o700) // ours again, but their server still listens in it
	_, err = Dial(filepath.Join(ours, "sock"), 0)
	if !errors.Is(err, trust.ErrUntrusted) || !strings.Contains(err.Error(), "runs as uid "+strconv.Itoa(uid)) {
		t.Fatalf("Dial of their server in our folder: %v", err)
	}
}
