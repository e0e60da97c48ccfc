package snapshot

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/internal/lockfile"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
	"github.com/agent-rewind/rewind/snapshot/internal/upkeep"
)

// history is a store with n automatic checkpoints, each after one more file was written, and
// what the workspace held at each.
type history struct {
	root   string
	s      *Store
	states map[string]state // checkpoint id -> the workspace it holds
	ids    []string         // oldest first
}

// newHistory takes a manual checkpoint of a small tree, then n automatic ones in session sess,
// each storing one new file (so each adds a pack); a manual checkpoint every manualEvery (0:
// none).
func newHistory(t testing.TB, n, manualEvery int, opts Options) *history {
	t.Helper()
	root := filepath.Join(tempDir(t), "ws")
	os.Mkdir(root, 0o755)
	genTreeMax(t, root, 30, 1, 2000)
	h := &history{root: root, s: mustOpen(t, root, opts), states: map[string]state{}}
	take := func(cp *CheckpointResult, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		h.states[cp.ID] = readState(t, root)
		h.ids = append(h.ids, cp.ID)
	}
	take(h.s.Checkpoint(ctx, "start"))
	for i := range n {
		os.WriteFile(filepath.Join(root, fmt.Sprintf("new%03d.txt", i)), []byte(fmt.Sprintf("file %d %d\n", i, time.Now().UnixNano())), 0o644)
		take(h.s.AutoCheckpoint(ctx, ToolCall{ID: fmt.Sprintf("toolu_%03d", i), Tool: "Bash", Summary: "make", Session: "s1"}, nil))
		if manualEvery > 0 && i%manualEvery == manualEvery-1 {
			take(h.s.Checkpoint(ctx, fmt.Sprintf("manual %d", i)))
		}
	}
	return h
}

// restoresAll rewinds s to every checkpoint of h that still exists and compares the workspace
// with what it held, byte for byte; it returns the ids that no longer exist.
func (h *history) restoresAll(t testing.TB, s *Store) (gone []string) {
	t.Helper()
	for _, id := range h.ids {
		if _, err := os.Lstat(filepath.Join(s.StateDir(), "checkpoints", id)); os.IsNotExist(err) {
			gone = append(gone, id)
			continue
		}
		if _, err := s.Rewind(ctx, id, RestoreOptions{}); err != nil {
			t.Fatalf("rewind to %s: %v", id, err)
		}
		if d := diffStates(h.states[id], readState(t, h.root)); d != "" {
			t.Fatalf("checkpoint %s does not restore what it held:\n%s", id, d)
		}
	}
	return gone
}

// packCount counts the pack indexes of s.
func packCount(t testing.TB, s *Store) int {
	t.Helper()
	names, err := platform.ReadDirNames(packDir(s))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, name := range names {
		if strings.HasSuffix(name, ".idx") {
			n++
		}
	}
	return n
}

func TestMaintainMergesSmallPacksPastTheLimit(t *testing.T) {
	defer func(b int) { batchPacks = b }(batchPacks)
	batchPacks = 8 // several batches
	h := newHistory(t, upkeep.AutoPackLimit-1, 0, Options{})
	if n := packCount(t, h.s); n != upkeep.AutoPackLimit {
		t.Fatalf("%d packs after %d checkpoints that stored something", n, upkeep.AutoPackLimit)
	}
	if due, err := h.s.MaintenanceDue(false); err != nil || due.Any() {
		t.Fatalf("due at %d packs: %+v %v", upkeep.AutoPackLimit, due, err)
	}
	os.WriteFile(filepath.Join(h.root, "one more.txt"), []byte("one more"), 0o644)
	cp, err := h.s.AutoCheckpoint(ctx, ToolCall{ID: "toolu_last", Tool: "Bash", Session: "s1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.states[cp.ID], h.ids = readState(t, h.root), append(h.ids, cp.ID)
	due, err := h.s.MaintenanceDue(false)
	if err != nil || due.SmallPacks != upkeep.AutoPackLimit+1 || due.Retention {
		t.Fatalf("due at %d packs: %+v %v", upkeep.AutoPackLimit+1, due, err)
	}
	res, err := h.s.Maintain(ctx, MaintainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Skipped != "" || res.Batches < 2 || res.PacksMerged < upkeep.AutoPackLimit+1 || res.Retention != nil {
		t.Fatalf("maintenance: %+v", res)
	}
	if n := packCount(t, h.s); n != 1 {
		t.Fatalf("%d packs after maintenance, want 1", n)
	}
	if due, err := h.s.MaintenanceDue(false); err != nil || due.Any() {
		t.Fatalf("still due after maintenance: %+v %v", due, err)
	}
	if gone := h.restoresAll(t, h.s); len(gone) > 0 {
		t.Fatalf("merging packs removed checkpoints %v", gone)
	}
	if rep, err := h.s.Check(ctx, CheckOptions{}); err != nil {
		t.Fatal(err)
	} else {
		for _, sec := range rep.Sections {
			if len(sec.Problems) > 0 {
				t.Fatalf("check after maintenance: %s: %+v", sec.Name, sec.Problems)
			}
		}
	}
}

func TestMaintainAppliesTheRetentionGCDryRunLists(t *testing.T) {
	chain := &chainLog{}
	h := newHistory(t, 12, 4, Options{Recorder: chain})
	policy := GCOptions{AutoKeepLast: 3}
	// A store never maintained is not due for the retention alone (hooks start no maintenance
	// for it), but the first maintenance applies it.
	due, err := h.s.MaintenanceDue(true)
	if err != nil || due.Any() {
		t.Fatalf("a store never maintained: due %+v %v, want nothing", due, err)
	}
	dry, err := h.s.GC(ctx, GCOptions{AutoKeepLast: 3, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(dry.Removed) != 9 {
		t.Fatalf("the dry run lists %d checkpoints, want 9 of the 12 automatic ones", len(dry.Removed))
	}
	res, err := h.s.Maintain(ctx, MaintainOptions{Retention: &policy})
	if err != nil {
		t.Fatal(err)
	}
	if res.Retention == nil || !slices.Equal(res.Retention.Removed, dry.Removed) {
		t.Fatalf("maintenance removed %+v, gc --dry-run listed %v", res.Retention, dry.Removed)
	}
	last := chain.entries[len(chain.entries)-1]
	if last.Kind != "gc" || fmt.Sprint(last.Data["removed"]) != fmt.Sprint(dry.Removed) {
		t.Fatalf("the chain's last entry: %+v", last)
	}
	gone := h.restoresAll(t, h.s)
	if !slices.Equal(gone, dry.Removed) {
		t.Fatalf("gone: %v, want %v", gone, dry.Removed)
	}
	tl, err := h.s.List()
	if err != nil {
		t.Fatal(err)
	}
	manual := 0
	for _, c := range tl.Checkpoints {
		if c.Kind != KindAuto {
			manual++
		}
	}
	if manual < 4 { // start and three every fourth call (more: the rewinds' safety checkpoints)
		t.Fatalf("%d manual checkpoints left, want the 4", manual)
	}
	// Applied: not due for a day, and a second run does nothing.
	if due, err := h.s.MaintenanceDue(true); err != nil || due.Any() {
		t.Fatalf("due right after maintenance: %+v %v", due, err)
	}
	res, err = h.s.Maintain(ctx, MaintainOptions{Retention: &policy})
	if err != nil || res.Retention != nil || res.PacksMerged != 0 {
		t.Fatalf("a second maintenance: %+v %v", res, err)
	}
	// A day later it is due again.
	day := time.Now().Add(-upkeep.RetentionEvery - time.Minute)
	os.WriteFile(filepath.Join(h.s.StateDir(), upkeep.StateFile), fmt.Appendf(nil, `{"retention":%q}`, day.Format(time.RFC3339)), 0o600)
	if due, err := h.s.MaintenanceDue(true); err != nil || !due.Retention || due.SmallPacks != 0 {
		t.Fatalf("a day later: due %+v %v, want the retention", due, err)
	}
	if due, err := h.s.MaintenanceDue(false); err != nil || due.Any() {
		t.Fatalf("a day later with the retention off: due %+v %v, want nothing", due, err)
	}
}

// TestMaintainGivesWay: a held store lock ends maintenance at once with a note and nothing
// changed, and a second maintenance does not run beside a first.
func TestMaintainGivesWay(t *testing.T) {
	h := newHistory(t, upkeep.AutoPackLimit+2, 0, Options{})
	before := packCount(t, h.s)
	unlock, err := platform.Lock(filepath.Join(h.s.StateDir(), "lock"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := h.s.Maintain(ctx, MaintainOptions{Retention: &AutoRetention})
	unlock()
	if err != nil || !strings.Contains(res.Skipped, "lock was held") || res.PacksMerged != 0 {
		t.Fatalf("maintenance under a held lock: %+v %v", res, err)
	}
	if n := packCount(t, h.s); n != before {
		t.Fatalf("%d packs, before %d", n, before)
	}
	m, err := lockfile.Open(filepath.Join(h.s.StateDir(), upkeep.LockFile), lockfile.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	if !h.s.MaintenanceRunning() {
		t.Fatal("MaintenanceRunning is false while another holds the maintenance lock")
	}
	res, err = h.s.Maintain(ctx, MaintainOptions{})
	m.Close()
	if err != nil || !strings.Contains(res.Skipped, "another maintenance") || packCount(t, h.s) != before {
		t.Fatalf("maintenance beside another: %+v %v", res, err)
	}
	if h.s.MaintenanceRunning() {
		t.Fatal("MaintenanceRunning after the other ended")
	}
}

// TestCheckpointDuringMaintenance: a checkpoint that waits for the lock as the hook's does
// (polling, at most 2 s) while maintenance holds it gets it when the batch ends, and is taken.
func TestCheckpointDuringMaintenance(t *testing.T) {
	defer func(b int) { batchPacks = b }(batchPacks)
	batchPacks = 4
	h := newHistory(t, upkeep.AutoPackLimit+8, 0, Options{})
	tried := make(chan struct{}, 1)
	hookLock := func() (func() error, error) {
		deadline := time.Now().Add(2 * time.Second)
		for {
			unlock, err := platform.TryLock(filepath.Join(h.s.StateDir(), "lock"))
			if err == nil || time.Now().After(deadline) {
				return unlock, err
			}
			select {
			case tried <- struct{}{}:
			default:
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	hook := mustOpen(t, h.root, Options{Lock: hookLock})
	done := make(chan error, 1)
	inBatch = func() {
		inBatch = nil
		go func() {
			os.WriteFile(filepath.Join(h.root, "during.txt"), []byte("during maintenance"), 0o644)
			_, err := hook.AutoCheckpoint(ctx, ToolCall{ID: "toolu_during", Tool: "Bash", Session: "s1"}, nil)
			done <- err
		}()
		<-tried // the checkpoint found the lock held
	}
	defer func() { inBatch = nil }()
	res, err := h.s.Maintain(ctx, MaintainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the checkpoint during maintenance: %v", err)
	}
	t.Logf("maintenance: %+v", res)
	if id, err := hook.Resolve("toolu_during"); err != nil || h.states[id] != nil {
		t.Fatalf("no checkpoint of its own before toolu_during: %q %v", id, err)
	}
}

// TestKillDuringMaintenance SIGKILLs a real maintenance (pack merges in batches, then the
// retention) at random moments: the store opens, every checkpoint left restores byte for byte,
// every one the retention keeps is left, and every one removed is named by a "gc" record.
func TestKillDuringMaintenance(t *testing.T) {
	trials := 8
	if testing.Short() {
		trials = 3
	}
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 11))
	var window time.Duration
	for trial := range trials {
		h := newHistory(t, upkeep.AutoPackLimit+12, 10, Options{})
		policy := GCOptions{AutoKeepLast: 5}
		dry, err := h.s.GC(ctx, GCOptions{AutoKeepLast: 5, DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		log := filepath.Join(filepath.Dir(h.root), "chain.jsonl")
		cmd := helperCmd(t, "maintain", helperArgs{Root: h.root, Log: log, Times: policy.AutoKeepLast})
		delay := killHelper(t, cmd, trial, r, &window)
		s, err := Open(h.root, Options{})
		if err != nil {
			t.Fatalf("trial %d (killed after %v): open: %v", trial, delay, err)
		}
		recorded := map[string]bool{}
		if b, err := os.ReadFile(log); err == nil {
			for _, id := range dry.Removed {
				if strings.Contains(string(b), id) {
					recorded[id] = true
				}
			}
		}
		gone := h.restoresAll(t, s)
		for _, id := range gone {
			if !slices.Contains(dry.Removed, id) || !recorded[id] {
				t.Fatalf("trial %d (killed after %v): checkpoint %s is gone (kept by the policy: %v; on the chain: %v)",
					trial, delay, id, !slices.Contains(dry.Removed, id), recorded[id])
			}
		}
		if rep, err := s.Check(ctx, CheckOptions{}); err != nil {
			t.Fatal(err)
		} else {
			for _, sec := range rep.Sections {
				for _, p := range sec.Problems {
					if p.Kind != "leftover" { // a killed write's temporary file
						t.Fatalf("trial %d (killed after %v): check: %+v", trial, delay, p)
					}
				}
			}
		}
		t.Logf("trial %d: killed after %v (window %v), %d packs, %d checkpoints gone", trial, delay, window, packCount(t, s), len(gone))
	}
}
