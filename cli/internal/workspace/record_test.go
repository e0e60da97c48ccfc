package workspace

import (
	"errors"
	"io/fs"
	"os"
	"testing"
)

func TestRecordOpensTheChainOnFirstUse(t *testing.T) {
	t.Setenv("REWIND_STATE_DIR", t.TempDir())
	w, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Ledger(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(w.ChainPath()); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the chain exists before anything was recorded: %v", err)
	}
	for want := range int64(2) {
		if seq, err := w.Record("memory", map[string]string{"note": "x"}); err != nil || seq != want {
			t.Fatalf("Record: %d, %v", seq, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if seq, err := w.Record("memory", map[string]string{}); err != nil || seq != 2 {
		t.Fatalf("Record after Close reopens: %d, %v", seq, err)
	}
	w.Close()
}

func TestSnapshotsRecordOnTheChain(t *testing.T) {
	t.Setenv("REWIND_STATE_DIR", t.TempDir())
	w, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	os.WriteFile(w.Root+"/a.txt", []byte("a"), 0o644)
	s, err := w.Snapshots(nil)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := s.Checkpoint(t.Context(), "first")
	if err != nil {
		t.Fatal(err)
	}
	if cur, err := s.Current(); err != nil || cur != cp.ID {
		t.Fatalf("Current: %q, %v; want %q", cur, err, cp.ID)
	}
	if cp.ChainSeq != 0 {
		t.Fatalf("checkpoint recorded at seq %d, want 0", cp.ChainSeq)
	}
}
