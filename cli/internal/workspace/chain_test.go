package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/agent-rewind/rewind/hashchain"
)

func TestChainAndRecorder(t *testing.T) {
	state := t.TempDir()
	t.Setenv("REWIND_STATE_DIR", state)
	w, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.ExistingChain(); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("ExistingChain before any record: %v", err)
	}
	c, err := w.Chain()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The leaves' Recorder interface, satisfied by the adapter.
	var rec interface {
		Record(kind string, data any) (int64, error)
	} = NewRecorder(c)
	for want := range int64(3) {
		seq, err := rec.Record("checkpoint", map[string]int64{"n": want})
		if err != nil || seq != want {
			t.Fatalf("Record: %d, %v", seq, err)
		}
	}
	if _, err := rec.Record("checkpoint", []string{"not an object"}); !errors.Is(err, hashchain.ErrBadData) {
		t.Fatalf("Record of a non-object: %v", err)
	}
	if c.Path() != filepath.Join(state, "stores", w.ID, "chain.jsonl") {
		t.Fatalf("chain at %s", c.Path())
	}
	anchor, _ := w.ChainAnchor()
	if anchor != filepath.Join(state, "anchors", w.ID, "head") {
		t.Fatalf("anchor %s is not keyed by the store id %s under REWIND_STATE_DIR %s", anchor, w.ID, state)
	}
	h, _, err := hashchain.ParseHead(must(os.ReadFile(anchor)))
	if err != nil || h.Size != 3 {
		t.Fatalf("anchored head %v, %v", h, err)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
