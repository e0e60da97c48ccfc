package workspace

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkRecord is one durable chain entry, as an operation recorded without a note pays it.
func BenchmarkRecord(b *testing.B) {
	b.Setenv("REWIND_STATE_DIR", b.TempDir())
	w, err := Init(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	for b.Loop() {
		if _, err := w.Record("checkpoint", map[string]any{"id": "0123456789ab", "files": 1200}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIntendRecord is the same entry with its note: Intend (write and fsync the note, fsync
// its directory), then record (append, remove the note). The commit itself is left out, so the
// difference from BenchmarkRecord (run together) is what the note costs an operation.
func BenchmarkIntendRecord(b *testing.B) {
	b.Setenv("REWIND_STATE_DIR", b.TempDir())
	w, err := Init(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	file := filepath.Join(w.Meta, "committed")
	os.WriteFile(file, []byte("x"), 0o600)
	for b.Loop() {
		record, _, err := w.Intend("checkpoint", map[string]any{"id": "0123456789ab", "files": 1200}, file, []byte("x"))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := record(); err != nil {
			b.Fatal(err)
		}
	}
}
