//go:build unix

package trust

import (
	"bufio"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/agent-rewind/rewind/cli/internal/trust/trusttest"
)

// serveEnv makes the test binary a server on the socket it names (another user runs it).
const serveEnv = "TRUST_TEST_SERVE"

func TestMain(m *testing.M) {
	if sock := os.Getenv(serveEnv); sock != "" {
		trusttest.Serve(sock, func(c net.Conn) { c.Write([]byte("allow\n")); c.Close() })
	}
	os.Exit(m.Run())
}

// connFD returns c's descriptor, for Peer.
func peerOf(t *testing.T, c net.Conn, path string) error {
	t.Helper()
	raw, err := c.(*net.UnixConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var perr error
	if err := raw.Control(func(fd uintptr) { perr = Peer(int(fd), path) }); err != nil {
		t.Fatal(err)
	}
	return perr
}

func TestPeerOfOwnServer(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := peerOf(t, c, sock); err != nil {
		t.Fatalf("our own server: %v", err)
	}
	if uid, err := PeerUID(-1); err == nil {
		t.Fatalf("PeerUID of no descriptor: %d", uid)
	}
}

// A server another user runs, on a socket in a folder of theirs: Peer names its uid, and
// nothing tells the client otherwise (the socket answers like any server).
func TestPeerOfAnotherUser(t *testing.T) {
	uid, gid := trusttest.Other(t)
	dir := t.TempDir()
	trusttest.Reachable(t, dir)
	self := trusttest.Self(t, dir)
	theirs := filepath.Join(dir, "theirs")
	if err := os.Mkdir(theirs, 0o700); err != nil {
		t.Fatal(err)
	}
	os.Chown(theirs, uid, gid)
	sock := filepath.Join(theirs, "sock")
	cmd := trusttest.Command(uid, gid, self, "-test.run=^$")
	cmd.Env = append(os.Environ(), serveEnv+"="+sock)
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
		t.Fatalf("the other user's server: %q", line)
	}
	c, err := net.Dial("unix", sock) // root may connect to anyone's socket
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	mustRefuse(t, peerOf(t, c, sock), sock, "runs as uid "+strconv.Itoa(uid), "not as you", "nothing was sent to it")
	mustRefuse(t, Folder(theirs), theirs, "owned by uid "+strconv.Itoa(uid))
}
