package snapshot

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/snapshot/internal/restore"
)

// A journal left by a crash in the middle of a restore: Open finishes it.
func TestOpenFinishesInterruptedRestore(t *testing.T) {
	root := t.TempDir()
	baseTree(t, root)
	chain := &chainLog{}
	s := mustOpen(t, root, Options{Recorder: chain})
	a, _ := s.Checkpoint(ctx, "a")
	want := readState(t, root)
	put(t, root, "README.md", "edited", 0o755)
	put(t, root, "new/file.txt", "new", 0o644)
	b, _ := s.Checkpoint(ctx, "b")
	// Half a restore: one file back, a temporary file left over, the journal in place.
	put(t, root, "README.md", "# hello\n", 0o644)
	put(t, root, "src/"+restore.TempPrefix+"0123456789abcdef", "partial", 0o600)
	j := &Journal{Op: "rewind", OpID: "00112233aabbccdd", From: b.ID, To: a.ID, Safety: b.ID, Time: time.Now()}
	if err := s.writeJournal(j); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(root, Options{Recorder: chain})
	if err != nil {
		t.Fatal(err)
	}
	if d := diffStates(want, readState(t, root)); d != "" {
		t.Fatalf("after recovery:\n%s", d)
	}
	rec := s2.Recovered()
	if rec == nil || rec.Outcome != "completed" || rec.Journal.OpID != j.OpID {
		t.Fatalf("recovery report: %+v", rec)
	}
	last := chain.entries[len(chain.entries)-1]
	if last.Kind != "rewind" || last.Data["recovered"] != true || last.Data["opId"] != j.OpID || last.Data["to"] != a.ID {
		t.Fatalf("recovery record: %+v", last)
	}
	if tl, _ := s2.List(); tl.Current != a.ID {
		t.Fatalf("position %s, want %s", tl.Current, a.ID)
	}
}

// A restore of chosen paths killed while writing a file leaves a temporary file beside it, outside
// the chosen paths: recovery removes it with them.
func TestOpenFinishesInterruptedRestorePaths(t *testing.T) {
	root := t.TempDir()
	baseTree(t, root)
	s := mustOpen(t, root, Options{})
	a, _ := s.Checkpoint(ctx, "a")
	want := readState(t, root)
	put(t, root, "src/main.go", "edited", 0o644)
	b, _ := s.Checkpoint(ctx, "b")
	put(t, root, "src/"+restore.TempPrefix+"0123456789abcdef", "", 0o600)
	j := &Journal{Op: "restore", OpID: "00112233aabbccdd", From: b.ID, To: a.ID, Safety: b.ID, Time: time.Now(), Paths: []string{"src/main.go"}}
	if err := s.writeJournal(j); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := diffStates(want, readState(t, root)); d != "" {
		t.Fatalf("after recovery:\n%s", d)
	}
	if rec := s2.Recovered(); rec == nil || rec.Outcome != "completed" {
		t.Fatalf("recovery report: %+v", rec)
	}
}

// When the target is gone, recovery restores the safety checkpoint; when both are, Open refuses
// with a RecoveryError that names them.
func TestRecoveryFallsBackThenRefuses(t *testing.T) {
	root := t.TempDir()
	baseTree(t, root)
	s := mustOpen(t, root, Options{})
	a, _ := s.Checkpoint(ctx, "a")
	want := readState(t, root)
	put(t, root, "stray.txt", "half-restored", 0o644)
	missing := "0000deadbeef"
	s.writeJournal(&Journal{Op: "rewind", OpID: "01", From: a.ID, To: missing, Safety: a.ID, Time: time.Now()})
	s2, err := Open(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rec := s2.Recovered(); rec == nil || rec.Outcome != "undone" {
		t.Fatalf("recovery: %+v", rec)
	}
	if d := diffStates(want, readState(t, root)); d != "" {
		t.Fatalf("after undo:\n%s", d)
	}
	s.writeJournal(&Journal{Op: "replay", OpID: "02", From: a.ID, To: missing, Safety: "0000cafef00d", Time: time.Now()})
	_, err = Open(root, Options{})
	var rerr *RecoveryError
	if !errors.As(err, &rerr) || !errors.Is(err, ErrRecovery) || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), "0000cafef00d") {
		t.Fatalf("unrecoverable journal: %v", err)
	}
	// Writers refuse too, until it is resolved; readers still work.
	if _, err := s.Checkpoint(ctx, "x"); !errors.Is(err, ErrRecovery) {
		t.Fatalf("checkpoint with an unrecoverable journal: %v", err)
	}
	if _, err := s.List(); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(s.StateDir(), "journal"), []byte("{garbage"), 0o600)
	if _, err := Open(root, Options{}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("garbage journal: %v", err)
	}
}
