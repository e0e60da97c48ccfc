package journal

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/snapshot/internal/objects"
)

func validID(s string) bool { return len(s) == 12 && objects.IsLowerHex(s) }

// TestJournalRoundTrip: a written journal reads back as written; no file is no journal.
func TestJournalRoundTrip(t *testing.T) {
	name := filepath.Join(t.TempDir(), "journal")
	if j, err := Read(name, validID); j != nil || err != nil {
		t.Fatalf("no file: %+v, %v", j, err)
	}
	want := &Journal{Op: "restore", OpID: "01", From: "0123456789ab", To: "0123456789ab", Safety: "ba9876543210",
		Time: time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC), Paths: []string{"a/b"}}
	if err := Write(name, want); err != nil {
		t.Fatal(err)
	}
	got, err := Read(name, validID)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("read %+v, %v; want %+v", got, err, want)
	}
}

// TestJournalRefused: a journal this version would not write is a CorruptError, never acted on.
func TestJournalRefused(t *testing.T) {
	for _, text := range []string{
		"not json",
		`{"format":2,"op":"rewind","to":"0123456789ab","safety":"0123456789ab"}`,
		`{"format":1,"op":"rewind","to":"../x","safety":"0123456789ab"}`,
		`{"format":1,"op":"restore","to":"0123456789ab","safety":"0123456789ab"}`,
		`{"format":1,"op":"restore","to":"0123456789ab","safety":"0123456789ab","paths":["../escape"]}`,
		`{"format":1,"op":"rewind","to":"0123456789ab","safety":"0123456789ab","paths":["a"]}`,
		`{"format":1,"op":"delete","to":"0123456789ab","safety":"0123456789ab"}`,
	} {
		name := filepath.Join(t.TempDir(), "journal")
		if err := os.WriteFile(name, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if j, err := Read(name, validID); j != nil || !errors.Is(err, objects.ErrCorrupt) {
			t.Errorf("%s: %+v, %v; want a CorruptError", text, j, err)
		}
	}
}
