package watch

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/cli/internal/unixsock"
	"github.com/agent-rewind/rewind/internal/winpath"
)

// askSocket sends req to the store's watcher over its socket (never in-process, as Ask would
// for a watcher in this process) and returns the reply.
func askSocket(store string, req Request) (*Reply, error) {
	c, err := unixsock.Dial(sockPath(store), 5*time.Second)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if err := json.NewEncoder(c).Encode(req); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(c).ReadBytes('\n')
	if err != nil {
		return nil, err
	}
	var r Reply
	return &r, json.Unmarshal(line, &r)
}

// TestServerOverTheSocket: a Windows watcher answers status, since and stop over its socket,
// with the changes made between two answers, over the named pipe (cli/internal/unixsock), which
// Wine 8 runs.
func TestServerOverTheSocket(t *testing.T) {
	root, store := t.TempDir(), filepath.Join(t.TempDir(), "store")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, Options{Root: root, Store: store}) }()
	var exited error
	t.Cleanup(func() {
		cancel()
		if exited == nil {
			<-done
		}
	})
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := askSocket(store, Request{Op: "status"}); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the watcher did not answer: %v", err)
		}
		select {
		case exited = <-done:
			if exited == nil {
				exited = os.ErrClosed
			}
			if winpath.UnderWine() {
				t.Skipf("the watcher exited before serving its pipe under Wine (%v)", exited)
			}
			t.Fatalf("the watcher exited at start: %v", exited)
		default:
		}
	}
	r, err := askSocket(store, Request{Op: "since"})
	if err != nil || r.Token == "" || r.Root != root || r.PID != os.Getpid() {
		t.Fatalf("first since: %+v, %v", r, err)
	}
	write(t, filepath.Join(root, "sub", "a.txt"), "x")
	r, err = askSocket(store, Request{Op: "since", Token: r.Token})
	if err != nil || r.Refused != "" || !slices.Contains(r.Paths, "sub") {
		t.Fatalf("since after a change: %+v, %v", r, err)
	}
	if r, err := askSocket(store, Request{Op: "explode"}); err != nil || !strings.Contains(r.Error, "unknown op") {
		t.Fatalf("an unknown op: %+v, %v", r, err)
	}
	if _, err := askSocket(store, Request{Op: "stop"}); err != nil {
		t.Fatalf("stop: %v", err)
	}
	select {
	case exited = <-done:
		if exited != nil {
			t.Fatalf("the watcher ended with %v", exited)
		}
		exited = os.ErrClosed
	case <-time.After(20 * time.Second):
		t.Fatal("the watcher did not stop when asked")
	}
}
