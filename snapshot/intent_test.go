package snapshot

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// intentLog is an Intender Recorder that logs the calls of the commit-then-record sequence.
type intentLog struct {
	chainLog
	calls []string
}

func (l *intentLog) Intend(kind string, data any, file string, content []byte) (func() (int64, error), func(), error) {
	l.calls = append(l.calls, "intend "+kind+" "+filepath.Base(file))
	return func() (int64, error) {
			l.calls = append(l.calls, "record")
			return l.Record(kind, data)
		}, func() {
			l.calls = append(l.calls, "drop")
		}, nil
}

// TestCheckpointPositionENOSPC: a checkpoint whose position cannot be written (ENOSPC, injected)
// fails, is not listed as if it had been taken, and its note is dropped, not recorded.
func TestCheckpointPositionENOSPC(t *testing.T) {
	root := t.TempDir()
	put(t, root, "a.txt", "a", 0o644)
	rec := &intentLog{}
	s := mustOpen(t, root, Options{Recorder: rec})
	first, err := s.Checkpoint(t.Context(), "first")
	if err != nil {
		t.Fatal(err)
	}
	put(t, root, "a.txt", "b", 0o644)
	testHookWritePosition = func() error { return &os.PathError{Op: "write", Path: "position", Err: syscall.ENOSPC} }
	defer func() { testHookWritePosition = nil }()
	_, err = s.Checkpoint(t.Context(), "second")
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("checkpoint with a full disk: %v, want ENOSPC", err)
	}
	tl, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(tl.Checkpoints) != 1 || tl.Current != first.ID {
		t.Fatalf("after the failed checkpoint the timeline is %+v, want only %s", tl, first.ID)
	}
	want := []string{"intend checkpoint " + first.ID, "record", "intend checkpoint"}
	if len(rec.calls) != 4 || rec.calls[0] != want[0] || rec.calls[1] != want[1] || rec.calls[3] != "drop" {
		t.Fatalf("recorder calls %q, want intend, record, intend, drop", rec.calls)
	}
	if len(rec.entries) != 1 {
		t.Fatalf("%d entries recorded, want 1", len(rec.entries))
	}
}
