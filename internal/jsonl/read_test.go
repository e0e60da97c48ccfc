package jsonl

import (
	"os"
	"path/filepath"
	"testing"
)

type rec struct{ ID string }

// A torn last line and values keep refuses are skipped; a missing log is empty.
func TestRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	if got, err := Read[rec](path, nil); err != nil || got != nil {
		t.Fatalf("missing log: %v %v", got, err)
	}
	os.WriteFile(path, []byte("{\"ID\":\"a\"}\n{\"ID\":\"\"}\n{\"ID\":\"b\"}\n{\"ID\":\"to"), 0o600)
	got, err := Read(path, func(r *rec) bool { return r.ID != "" })
	if err != nil || len(got) != 2 || got[0].ID != "a" || got[1].ID != "b" {
		t.Fatalf("Read = %+v, %v; want a and b", got, err)
	}
	if all, _ := Read[rec](path, nil); len(all) != 3 {
		t.Fatalf("Read with no filter = %+v, want the three whole lines", all)
	}
}
