package hookserver

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/agent-rewind/rewind/cli/internal/hookwire"
)

// BenchmarkServedAutoCheckpoint is the hook path as the guard server sees it: a PreToolUse call
// with --checkpoint on an unchanged workspace of 2,000 files, the watcher running in the server,
// a new tool call id each call, over the server's socket. The client here is this process, so the
// figure is the server's work and one socket round trip, without the hook process.
func BenchmarkServedAutoCheckpoint(b *testing.B) { benchmarkServed(b, false) }

// BenchmarkServedAutoCheckpointChanged is BenchmarkServedAutoCheckpoint with one file changed
// before each call, as before most of an editing agent's calls: each call writes a checkpoint
// (its pack, trees, manifest, checkpoint file and position), records it on the chain and notes
// the call, each durably.
func BenchmarkServedAutoCheckpointChanged(b *testing.B) { benchmarkServed(b, true) }

func benchmarkServed(b *testing.B, change bool) {
	socket := serveWatched(b, 0)
	ws := b.TempDir()
	if err := os.Mkdir(filepath.Join(ws, ".git"), 0o755); err != nil {
		b.Fatal(err)
	}
	for i := range 2000 {
		if err := os.WriteFile(filepath.Join(ws, fmt.Sprintf("f%04d.txt", i)), []byte(fmt.Sprint(i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	n := 0
	call := func() {
		n++
		if change {
			if err := os.WriteFile(filepath.Join(ws, "f0001.txt"), []byte(fmt.Sprint("changed ", n)), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		in := fmt.Sprintf(`{"session_id":"s","cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"go test ./..."},"tool_use_id":"toolu_%d"}`, ws, n)
		as := ask(b, socket, guardRequest(ws, in, "guard", "--checkpoint"))
		if len(as) != 2 || as[1].Kind != hookwire.Result || as[1].Code != 0 || len(as[1].Stdout)+len(as[1].Stderr) != 0 {
			b.Fatalf("call %d: %d answers: %+v", n, len(as), as)
		}
	}
	for range 10 { // the first checkpoint, the watcher's start, and its first token
		call()
	}
	b.ResetTimer()
	for b.Loop() {
		call()
	}
}
