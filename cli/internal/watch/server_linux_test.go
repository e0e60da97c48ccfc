package watch

import (
	"bufio"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServerRefusesBadRequests: garbage, an unknown op, or an endless line get an error reply
// (or the connection closed), and the watcher keeps answering.
func TestServerRefusesBadRequests(t *testing.T) {
	root, store := t.TempDir(), filepath.Join(t.TempDir(), "store")
	startWatcher(t, root, store)
	for _, req := range []string{"not json\n", `{"op":"explode"}` + "\n", strings.Repeat("x", 1<<20)} {
		c, err := net.Dial("unix", filepath.Join(dir(store), "sock"))
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		go c.Write([]byte(req))
		line, _ := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if !strings.Contains(line, `"error"`) {
			t.Errorf("request %.20q: reply %q, want an error", req, line)
		}
	}
	if _, err := Ask(store, Request{Op: "status"}, 5*time.Second); err != nil {
		t.Fatalf("after bad requests: %v", err)
	}
}

// TestLongStorePath: a store whose socket path is longer than a socket address may be is
// reached through its folder's descriptor.
func TestLongStorePath(t *testing.T) {
	root := t.TempDir()
	store := filepath.Join(t.TempDir(), strings.Repeat("long-folder-name-", 8), "store")
	if len(filepath.Join(dir(store), "sock")) <= 108 {
		t.Fatal("the path is not long enough to test anything")
	}
	startWatcher(t, root, store)
	r, err := Ask(store, Request{Op: "since"}, 5*time.Second)
	if err != nil || r.Token == "" {
		t.Fatalf("since: %+v, %v", r, err)
	}
}

// TestIdleExit: a watcher no one asks exits after its idle period, removing its socket.
func TestIdleExit(t *testing.T) {
	root, store := t.TempDir(), filepath.Join(t.TempDir(), "store")
	done := make(chan error, 1)
	go func() { done <- Run(t.Context(), Options{Root: root, Store: store, Idle: 300 * time.Millisecond}) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the watcher did not exit when idle")
	}
	if _, err := Ask(store, Request{Op: "status"}, time.Second); err != ErrNotRunning {
		t.Fatalf("after the idle exit: %v, want ErrNotRunning", err)
	}
}

// TestExitsWhenSocketRemoved: a watcher whose socket is removed can be reached by no one, and
// its lock would keep a new one from starting: it exits.
func TestExitsWhenSocketRemoved(t *testing.T) {
	root, store := t.TempDir(), filepath.Join(t.TempDir(), "store")
	w := startWatcher(t, root, store)
	if err := os.Remove(sockPath(store)); err != nil {
		t.Fatal(err)
	}
	w.stopped(t)
	if !lockFree(filepath.Join(dir(store), "lock")) {
		t.Fatal("the watcher's lock is still held after it exited")
	}
}
