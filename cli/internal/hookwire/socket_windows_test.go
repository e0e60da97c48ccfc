package hookwire

import (
	"errors"
	"net"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// wsaEAFNoSupport is what socket(AF_UNIX) fails with where the system has no AF_UNIX sockets.
const wsaEAFNoSupport = syscall.Errno(10047)

// TestDialWindows: a request and its answer cross an AF_UNIX socket through Dial and Conn, a
// server that does not answer times out as syscall.EAGAIN, and a missing one fails Dial.
func TestDialWindows(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "sock")
	ln, err := net.Listen("unix", sock)
	if errors.Is(err, wsaEAFNoSupport) {
		t.Skipf("no AF_UNIX sockets here (Wine 8 has none; Windows has them since 10 1803): %v", err)
	}
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
			go func() {
				defer c.Close()
				p, err := ReadMessage(c)
				if err != nil {
					return
				}
				if r, err := DecodeRequest(p); err == nil && r.Op == OpGuard {
					c.Write(AppendAnswer(nil, &Answer{Kind: Result, Code: 2, Stdout: []byte(r.Dir)}))
					return
				}
				time.Sleep(3 * time.Second) // the client's read times out first
			}()
		}
	}()
	fd, err := Dial(sock, 5)
	if err != nil {
		t.Fatal(err)
	}
	c := Conn(fd)
	if _, err := c.Write(AppendRequest(nil, &Request{Op: OpGuard, Dir: `C:\w`})); err != nil {
		t.Fatal(err)
	}
	p, err := ReadMessage(c)
	c.Close()
	if err != nil {
		t.Fatal(err)
	}
	if a, err := DecodeAnswer(p); err != nil || a.Code != 2 || string(a.Stdout) != `C:\w` {
		t.Fatalf("answer %+v, %v", a, err)
	}

	fd, err = Dial(sock, 1)
	if err != nil {
		t.Fatal(err)
	}
	c = Conn(fd)
	c.Write(AppendRequest(nil, &Request{Op: OpStatus}))
	if _, err := ReadMessage(c); err != syscall.EAGAIN {
		t.Fatalf("a silent server: %v, want syscall.EAGAIN", err)
	}
	c.Close()
	if _, err := Dial(filepath.Join(t.TempDir(), "none"), 1); err == nil {
		t.Fatal("Dial of no socket succeeded")
	}
}

// TestSockNameTooLong: a socket path too long for an address is refused with what to do.
func TestSockNameTooLong(t *testing.T) {
	long := `C:\` + strings.Repeat("x", 120) + `\sock`
	if _, _, err := SockName(long); err == nil || !strings.Contains(err.Error(), "shorter state folder") {
		t.Fatalf("SockName(%d bytes) = %v", len(long), err)
	}
	if name, done, err := SockName(`C:\s\sock`); err != nil || name != `C:\s\sock` {
		t.Fatalf("SockName(short) = %q, %v", name, err)
	} else {
		done()
	}
}
