package snapshot

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/agent-rewind/rewind/snapshot/internal/commitlog"
)

// restartAs makes the store's next Open see another boot, as after a restart.
func restartAs(t *testing.T, boot string) {
	t.Helper()
	was := bootID
	bootID = func() (string, error) { return boot, nil }
	t.Cleanup(func() { bootID = was })
}

func logRecords(t *testing.T, s *Store) []commitlog.Record {
	t.Helper()
	l, err := commitlog.Open(filepath.Join(s.state, logFile), s.boot)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	recs, err := l.Records()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// TestPowerCutLosesNoLoggedCheckpoint takes checkpoints through the commit log, then does what
// a power cut may do to what was written without a sync: every file a record holds is lost or
// torn (packs cut short, indexes, manifests and checkpoint files gone, the position back to what
// it was before, the stat cache's log cut). After the restart (another boot id), Open writes the
// records back: every checkpoint is listed, the position is the last one, check finds nothing
// wrong reading every byte, and each checkpoint rewinds byte for byte.
func TestPowerCutLosesNoLoggedCheckpoint(t *testing.T) {
	if _, err := bootID(); err != nil {
		t.Skip("no boot id on this system: checkpoints are not logged here")
	}
	root, s := nestedWorkspace(t, 60)
	first, err := s.Checkpoint(ctx, "first")
	if err != nil {
		t.Fatal(err)
	}
	// Settled, as the last other writer leaves it: from here on only the log makes it durable.
	if err := s.settleLog(); err != nil {
		t.Fatal(err)
	}
	durablePos, err := os.ReadFile(filepath.Join(s.state, "position"))
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(29, 1))
	states := map[string]state{first.ID: readState(t, root)}
	var ids []string
	for i := range 4 {
		mutate(t, root, r)
		res, err := s.Checkpoint(ctx, "logged")
		if err != nil {
			t.Fatal(err)
		}
		if res.Reused {
			t.Fatalf("checkpoint %d reused %s", i, res.ID)
		}
		ids = append(ids, res.ID)
		states[res.ID] = readState(t, root)
	}
	recs := logRecords(t, s)
	if len(recs) != len(ids) {
		t.Fatalf("%d records in the log, want one per checkpoint (%d)", len(recs), len(ids))
	}
	// The power cut.
	for _, rec := range recs {
		for _, f := range rec.Files {
			name := filepath.Join(s.state, filepath.FromSlash(f.Name))
			switch {
			case f.Name == "position":
				os.WriteFile(name, durablePos, 0o600)
			case filepath.Ext(f.Name) == ".pack":
				os.Truncate(name, int64(len(f.Data)/2))
			default:
				os.Remove(name)
			}
		}
	}
	os.Truncate(filepath.Join(s.state, "index-log"), 10)
	restartAs(t, "00000000-0000-4000-8000-000000000001")
	s = mustOpen(t, root, Options{})
	tl, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if tl.Current != ids[len(ids)-1] || len(tl.Checkpoints) != len(ids)+1 {
		t.Fatalf("after the restart: current %s of %d checkpoints, want %s of %d", tl.Current, len(tl.Checkpoints), ids[len(ids)-1], len(ids)+1)
	}
	if recs := logRecords(t, s); len(recs) != 0 {
		t.Errorf("the log holds %d records after the replay, want it settled", len(recs))
	}
	rep, err := s.Check(ctx, CheckOptions{ReadData: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, sec := range rep.Sections {
		for _, p := range sec.Problems {
			t.Errorf("check after the restart: %s: %s %s: %s", sec.Name, p.Kind, p.Where, p.What)
		}
	}
	for _, id := range append([]string{first.ID}, ids...) {
		if _, err := s.Rewind(ctx, id, RestoreOptions{}); err != nil {
			t.Fatalf("rewind to %s: %v", id, err)
		}
		if d := diffStates(states[id], readState(t, root)); d != "" {
			t.Fatalf("rewind to %s after the restart:\n%s", id, d)
		}
	}
}

// TestKilledAfterTheLogsSync: a checkpoint whose process stops right after its record is synced
// (nothing else written: not the index, the manifest, the checkpoint's file nor the position)
// is taken: the next writer, in the same boot, writes its files and moves the position to it.
func TestKilledAfterTheLogsSync(t *testing.T) {
	if _, err := bootID(); err != nil {
		t.Skip("no boot id on this system: checkpoints are not logged here")
	}
	root, s := nestedWorkspace(t, 30)
	if _, err := s.Checkpoint(ctx, "first"); err != nil {
		t.Fatal(err)
	}
	put(t, root, "d0/new.txt", "written before the killed checkpoint\n", 0o644)
	want := readState(t, root)
	testHookLogged = func(step string) {
		if step == "after append" {
			runtime.Goexit() // the writer stops here: its deferred unlock stands for the kill
		}
	}
	done := make(chan struct{})
	go func() { defer close(done); s.Checkpoint(ctx, "killed") }()
	<-done
	testHookLogged = nil
	recs := logRecords(t, s)
	if len(recs) == 0 {
		t.Fatal("no record in the log")
	}
	cpName := ""
	for _, f := range recs[len(recs)-1].Files {
		if filepath.Dir(f.Name) == "checkpoints" {
			cpName = filepath.Base(f.Name)
		}
	}
	if _, err := os.Lstat(filepath.Join(s.state, "checkpoints", cpName)); err == nil {
		t.Fatal("the killed checkpoint's file exists: the hook ran too late")
	}
	s = mustOpen(t, root, Options{})
	put(t, root, "d1/after.txt", "after\n", 0o644)
	if _, err := s.Checkpoint(ctx, "next"); err != nil {
		t.Fatal(err)
	}
	tl, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(tl.Checkpoints, func(c Checkpoint) bool { return c.ID == cpName }) {
		t.Fatalf("the checkpoint committed in the log (%s) is not listed", cpName)
	}
	if _, err := s.Rewind(ctx, cpName, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if d := diffStates(want, readState(t, root)); d != "" {
		t.Fatalf("rewind to the checkpoint finished from the log:\n%s", d)
	}
}

// TestRewindSettlesTheLog: a rewind's safety checkpoint goes through the log, and the rewind's
// own position, written durably, settles it first, so that a restart after the rewind writes
// back no older position: the workspace stays at the rewind's target.
func TestRewindSettlesTheLog(t *testing.T) {
	if _, err := bootID(); err != nil {
		t.Skip("no boot id on this system: checkpoints are not logged here")
	}
	root, s := nestedWorkspace(t, 30)
	first, err := s.Checkpoint(ctx, "first")
	if err != nil {
		t.Fatal(err)
	}
	put(t, root, "d0/x.txt", "x\n", 0o644)
	if _, err := s.Checkpoint(ctx, "second"); err != nil {
		t.Fatal(err)
	}
	put(t, root, "d1/y.txt", "not checkpointed: the safety checkpoint keeps it\n", 0o644)
	res, err := s.Rewind(ctx, first.ID, RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.SafetyCreated {
		t.Fatal("the rewind made no safety checkpoint")
	}
	if recs := logRecords(t, s); len(recs) != 0 {
		t.Fatalf("%d records left in the log after the rewind, want it settled", len(recs))
	}
	restartAs(t, "00000000-0000-4000-8000-000000000002")
	s = mustOpen(t, root, Options{})
	tl, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if tl.Current != first.ID {
		t.Fatalf("after a restart the position is %s, want the rewind's target %s", tl.Current, first.ID)
	}
	if _, err := s.Rewind(ctx, res.SafetyResult.ID, RestoreOptions{}); err != nil {
		t.Fatalf("rewind to the safety checkpoint: %v", err)
	}
	if got, err := os.ReadFile(filepath.Join(root, "d1/y.txt")); err != nil || string(got) != "not checkpointed: the safety checkpoint keeps it\n" {
		t.Fatalf("the safety checkpoint lost d1/y.txt: %q, %v", got, err)
	}
}
