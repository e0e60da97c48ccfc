package hookwire_test

import (
	"net"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/cli/internal/hookwire"
	"github.com/agent-rewind/rewind/cli/internal/unixsock"
)

// TestDialWindows: a request and its answer cross a named pipe through Dial and Conn, a
// server that does not answer times out as syscall.EAGAIN, one that closes without answering
// is io.EOF's end, and a missing one fails Dial.
func TestDialWindows(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "sock")
	ln, err := unixsock.Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serveTest(c)
		}
	}()
	c, err := hookwire.Dial(sock, 5)
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 300<<10) // more than the pipe's buffers hold
	if _, err := c.Write(hookwire.AppendRequest(nil, &hookwire.Request{Op: hookwire.OpGuard, Dir: `C:\w`, Stdin: []byte(big)})); err != nil {
		t.Fatal(err)
	}
	p, err := hookwire.ReadMessage(c)
	c.Close()
	if err != nil {
		t.Fatal(err)
	}
	if a, err := hookwire.DecodeAnswer(p); err != nil || a.Code != 2 || string(a.Stdout) != `C:\w` || string(a.Stderr) != big {
		t.Fatalf("answer %c %d %q (%d bytes of stderr), %v", a.Kind, a.Code, a.Stdout, len(a.Stderr), err)
	}

	c, err = hookwire.Dial(sock, 1)
	if err != nil {
		t.Fatal(err)
	}
	c.Write(hookwire.AppendRequest(nil, &hookwire.Request{Op: hookwire.OpStatus}))
	if _, err := hookwire.ReadMessage(c); err != syscall.EAGAIN {
		t.Fatalf("a silent server: %v, want syscall.EAGAIN", err)
	}
	c.Close()

	c, err = hookwire.Dial(sock, 5)
	if err != nil {
		t.Fatal(err)
	}
	c.Write(hookwire.AppendRequest(nil, &hookwire.Request{Op: hookwire.OpStop}))
	if _, err := hookwire.ReadMessage(c); err == nil || err == syscall.EAGAIN {
		t.Fatalf("a server that closed without answering: %v, want the connection's end", err)
	}
	c.Close()
	if _, err := hookwire.Dial(filepath.Join(t.TempDir(), "none"), 1); err == nil {
		t.Fatal("Dial of no server succeeded")
	}
}

// serveTest answers a guard request with its folder and input, closes on a stop request, and
// says nothing to anything else (the client's read times out first).
func serveTest(c net.Conn) {
	defer c.Close()
	p, err := hookwire.ReadMessage(c)
	if err != nil {
		return
	}
	r, err := hookwire.DecodeRequest(p)
	switch {
	case err != nil, r.Op == hookwire.OpStop:
	case r.Op == hookwire.OpGuard:
		c.Write(hookwire.AppendAnswer(nil, &hookwire.Answer{Kind: hookwire.Result, Code: 2, Stdout: []byte(r.Dir), Stderr: r.Stdin}))
	default:
		time.Sleep(3 * time.Second)
	}
}

// TestPipeName: one pipe a socket path, whatever its case or length, another for another path.
func TestPipeName(t *testing.T) {
	long := `C:\` + strings.Repeat("x", 300) + `\sock`
	a, err := hookwire.PipeName(`C:\State\hook-server\sock`)
	if err != nil || !strings.HasPrefix(a, `\\.\pipe\agent-rewind-`) || len(a) != len(`\\.\pipe\agent-rewind-`)+16 {
		t.Fatalf("PipeName = %q, %v", a, err)
	}
	for _, c := range []struct {
		path string
		same bool
	}{{`c:\state\HOOK-SERVER\sock`, true}, {`C:\State\hook-server\..\hook-server\sock`, true}, {`C:\State\watch\sock`, false}, {long, false}} {
		if b, err := hookwire.PipeName(c.path); err != nil || (a == b) != c.same {
			t.Errorf("PipeName(%.40q) = %q, %v; same as %q: want %v", c.path, b, err, a, c.same)
		}
	}
}
