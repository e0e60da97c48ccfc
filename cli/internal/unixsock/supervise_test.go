package unixsock

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// TestSupervise: the server runs until over says so; then its context ends and its listener
// closes, which ends its Accept.
func TestSupervise(t *testing.T) {
	ln, err := Listen(filepath.Join(t.TempDir(), "sock"))
	if err != nil {
		t.Fatal(err)
	}
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
