package watch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/snapshot"
)

// benchTree makes a workspace of 4,000 files in 200 folders.
func benchTree(b *testing.B) string {
	root := b.TempDir()
	for d := range 200 {
		dir := filepath.Join(root, fmt.Sprintf("d%03d", d/20), fmt.Sprintf("e%03d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 20 {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d", f)), []byte("x"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	return root
}

// BenchmarkAskSince is the watcher's answer as the automatic checkpoint before a tool call gets
// it from a watcher in its own process (the guard server's): drain the queue, check that the
// answer can be trusted, list what changed (nothing), on a workspace of 4,000 files.
func BenchmarkAskSince(b *testing.B) {
	root, store := benchTree(b), filepath.Join(b.TempDir(), "store")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, Options{Root: root, Store: store}) }()
	defer func() { cancel(); <-done }()
	var tok string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if r, err := Ask(store, Request{Op: "since"}, time.Second); err == nil {
			tok = r.Token
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("the watcher did not answer")
		}
	}
	for b.Loop() {
		r, err := Ask(store, Request{Op: "since", Token: tok}, time.Second)
		if err != nil || r.Refused != "" || len(r.Paths) != 0 {
			b.Fatalf("since %s: %+v, %v", tok, r, err)
		}
		tok = r.Token
	}
}

// BenchmarkWatcherStart is a watcher's start on a workspace of 4,000 files in 200 folders:
// every folder watched and read (and, with links_linux.go, every file's link count looked at).
// Closing the inotify instance, which waits for the kernel's grace periods (often more than the
// start), is left out.
func BenchmarkWatcherStart(b *testing.B) {
	root, cookies := benchTree(b), b.TempDir()
	b.ResetTimer()
	for range b.N {
		tr, err := newTree(root, "", cookies)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		tr.close()
		b.StartTimer()
	}
}

// BenchmarkCheckpointChanged is "agent-rewind checkpoint" after 10 files changed, with the
// watcher asked over its socket (as the command asks it, without the process around it), on a
// workspace of 4,000 files: the cookie round trip, the answer, and the checkpoint of 10 paths.
func BenchmarkCheckpointChanged(b *testing.B) {
	root, store := benchTree(b), filepath.Join(b.TempDir(), "store")
	s, err := snapshot.Open(root, snapshot.Options{StateDir: store})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, Options{Root: root, Store: store}) }()
	defer func() { cancel(); <-done }()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := Ask(store, Request{Op: "status"}, time.Second); err == nil {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("the watcher did not answer")
		}
	}
	local.Delete(store) // asked over the socket, as by another process
	n := 0
	checkpoint := func() *snapshot.CheckpointResult {
		res, err := Checkpoint(context.Background(), s, root, store, "", false)
		if err != nil {
			b.Fatal(err)
		}
		return res
	}
	checkpoint()
	checkpoint()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		n++
		for f := range 10 {
			name := filepath.Join(root, fmt.Sprintf("d%03d", f), fmt.Sprintf("e%03d", f*20), "f00")
			if err := os.WriteFile(name, []byte(fmt.Sprint("change ", n)), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		if res := checkpoint(); res.Walk.Mode != "changed" {
			b.Fatalf("walk %+v", res.Walk)
		}
	}
}
