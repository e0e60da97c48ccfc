package unixsock

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// TestSupervise: the server runs until over says so; then its context ends and its listener
// closes, which ends its Accept.
func TestSupervise(t *testing.T) {
	ln := listen(t, filepath.Join(t.TempDir(), "sock"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var done, asked atomic.Bool
	Supervise(ctx, cancel, ln, func() bool { asked.Store(true); return done.Load() })
	accepted := make(chan error, 1)
	go func() {
		_, err := ln.Accept()
		accepted <- err
	}()
	for !asked.Load() {
		time.Sleep(10 * time.Millisecond)
	}
	if ctx.Err() != nil {
		t.Fatal("stopped before over said so")
	}
	done.Store(true)
	select {
	case err := <-accepted:
		if err == nil || ctx.Err() == nil {
			t.Fatalf("Accept returned %v, context %v: want a closed listener and an ended context", err, ctx.Err())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the listener is still open 30 s after over said to stop")
	}
}

// listen is Listen for a test.
func listen(t *testing.T, path string) net.Listener {
	t.Helper()
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// TestListenDial: a client reaches the server listening, which finds it is its own user's,
// and once the listener is closed (the socket file left, as a dead server leaves it) is told
// no server listens. (A named pipe, Windows', connects only while the server accepts.)
func TestListenDial(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "sock")
	ln := listen(t, sock)
	accepted := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			err = peer(c)
			c.Close()
		}
		accepted <- err
	}()
	c, err := Dial(sock, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-accepted; err != nil {
		t.Fatalf("the server's side: %v", err)
	}
	c.Close()
	ln.Close()
	if _, err := Dial(sock, time.Second); !errors.Is(err, ErrNoServer) {
		t.Fatalf("Dial after the server closed: %v, want ErrNoServer", err)
	}
}
