package agentws_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/agent-rewind/rewind/cli/internal/agentws"
	"github.com/agent-rewind/rewind/mcpserver"
	"github.com/agent-rewind/rewind/snapshot"
)

// candidatesWorkspace makes a workspace of files files with mcpserver.MaxCandidates+2
// checkpoints, each one file different from the one before.
func candidatesWorkspace(b *testing.B, files int) (*agentws.Workspace, string) {
	b.Helper()
	root := b.TempDir()
	for i := range files {
		p := filepath.Join(root, fmt.Sprintf("d%02d", i%50), fmt.Sprintf("f%05d.txt", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(fmt.Sprintf("file %d\n", i)), 0o644)
	}
	w, err := agentws.New(root, agentws.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { w.Close() })
	for i := range mcpserver.MaxCandidates + 2 {
		os.WriteFile(filepath.Join(root, "d00", "f00000.txt"), []byte(fmt.Sprint(i)), 0o644)
		if _, err := w.Checkpoint(context.Background(), fmt.Sprint(i)); err != nil {
			b.Fatal(err)
		}
	}
	return w, root
}

// BenchmarkBacktrackCandidates is the tool call on 5,000 files and 12 checkpoints: each
// distinct manifest read once, changes counted in memory.
func BenchmarkBacktrackCandidates(b *testing.B) {
	w, _ := candidatesWorkspace(b, 5000)
	for b.Loop() {
		if _, err := w.BacktrackCandidates(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCandidatesViaDiff is the alternative for the same answer: the store's Diff against
// the current position for each of the candidates returned (two manifest reads each).
func BenchmarkCandidatesViaDiff(b *testing.B) {
	_, root := candidatesWorkspace(b, 5000)
	s, err := snapshot.Open(root, snapshot.Options{StateDir: store(b, root)})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		t, err := s.List()
		if err != nil {
			b.Fatal(err)
		}
		ranked := agentws.RankCandidates(t.Checkpoints, nil)[:mcpserver.MaxCandidates]
		for _, c := range ranked {
			if _, err := s.Diff(b.Context(), c.ID, t.Current); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkMemoryAdd is one failure note: the chain entry (its own fsync) plus the line and
// its fsync, under the lock, with the file re-read (here 100 notes long).
func BenchmarkMemoryAdd(b *testing.B) {
	root := b.TempDir()
	w, err := agentws.New(root, agentws.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	os.WriteFile(filepath.Join(root, "a"), []byte("a"), 0o644)
	cp, err := w.Checkpoint(b.Context(), "")
	if err != nil {
		b.Fatal(err)
	}
	ws := workspaceOf(b, root)
	m := agentws.OpenMemory(ws.Meta, ws)
	for range 100 {
		m.Add(cp.ID, "warm-up note", "")
	}
	for b.Loop() {
		if _, _, err := m.Add(cp.ID, "the build failed after the refactor", "run the tests first"); err != nil {
			b.Fatal(err)
		}
	}
}
