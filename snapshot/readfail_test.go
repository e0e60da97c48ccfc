package snapshot

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/snapshot/internal/objects"
)

// readFailSetup is a workspace with a checkpoint C1 (the target) and changes since: the state
// before a rewind. packed stores C1's contents in a pack, else as loose objects.
type readFailSetup struct {
	s              *Store
	root           string
	target         string
	before, wanted state
}

func newReadFailSetup(t *testing.T, packed bool) *readFailSetup {
	return newReadFailSetupLarge(t, packed, false)
}

// newReadFailSetupLarge is newReadFailSetup with, when large, two files stored in chunks, one
// changed in its middle since C1 and one removed since.
func newReadFailSetupLarge(t *testing.T, packed, large bool) *readFailSetup {
	t.Helper()
	root := filepath.Join(t.TempDir(), "ws")
	n := 6
	if packed {
		n = objects.FewFiles + 16
	}
	for i := range n {
		put(t, root, fmt.Sprintf("d%d/f%03d.txt", i%3, i), fmt.Sprintf("file %d, first version\n", i), 0o644)
	}
	if large {
		writeAt(t, root, "large/a.bin", 0, randomBytes(objects.ChunkedFile+(2<<20), 71))
		writeAt(t, root, "large/b.bin", 0, randomBytes(objects.ChunkedFile+1, 72))
	}
	s := mustOpen(t, root, Options{})
	c1, err := s.Checkpoint(ctx, "C1")
	if err != nil {
		t.Fatal(err)
	}
	// A checkpoint packs its small contents and trees; the loose case is made by hand.
	if !packed {
		loosen(t, s)
	}
	if loose := countObjects(t, s); (loose == 0) != packed {
		t.Fatalf("packed %v, but %d loose objects", packed, loose)
	}
	wanted := readState(t, root)
	for i := range 4 {
		put(t, root, fmt.Sprintf("d%d/f%03d.txt", i%3, i), fmt.Sprintf("file %d, changed\n", i), 0o644)
	}
	os.Remove(filepath.Join(root, "d2/f005.txt"))
	put(t, root, "new/added.txt", "added since\n", 0o644)
	if large {
		writeAt(t, root, "large/a.bin", 3<<20, randomBytes(1000, 73))
		os.Remove(filepath.Join(root, "large/b.bin"))
	}
	return &readFailSetup{s: s, root: root, target: c1.ID, before: readState(t, root), wanted: wanted}
}

// failNth makes the n-th read of a stored object or pack index (counting from 1) fail with err;
// it returns the counter of reads seen.
func failNth(o *objects.Store, n int, err error) *int {
	var mu sync.Mutex
	calls := 0
	o.Fault = func(string) error {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == n {
			return err
		}
		return nil
	}
	return &calls
}

// TestRestoreUndoneOnEveryReadFailure fails each read of a rewind in turn (every open and read of
// an object, loose, packed or a chunk, of a chunk list, and of a pack index) with an I/O error, a permission error, "is a
// directory" and a short read. Whatever fails, the rewind ends with the workspace equal to the
// target or, when it could not read it, back at the state before it (never a mix), no journal
// left, and the next command works.
func TestRestoreUndoneOnEveryReadFailure(t *testing.T) {
	errs := []error{syscall.EIO, syscall.EACCES, syscall.EISDIR, io.EOF}
	for _, c := range []struct{ packed, large bool }{{false, false}, {true, false}, {false, true}} {
		packed := c.packed
		newReadFailSetup := func(t *testing.T, packed bool) *readFailSetup { return newReadFailSetupLarge(t, packed, c.large) }
		t.Run(fmt.Sprintf("packed=%v,chunked=%v", packed, c.large), func(t *testing.T) {
			f := newReadFailSetup(t, packed)
			reads := failNth(f.s.objects, 0, nil)
			if _, err := f.s.Rewind(ctx, f.target, RestoreOptions{}); err != nil {
				t.Fatal(err)
			}
			total := *reads
			if total < 8 {
				t.Fatalf("a rewind made only %d reads", total)
			}
			undone := 0
			step := 1
			if c.large {
				step = 7 // hundreds of reads, each trial storing megabytes: every 7th, all 4 errors
			}
			for n := 1; n <= total; n += step {
				f := newReadFailSetup(t, packed)
				inject := errs[n%len(errs)]
				failNth(f.s.objects, n, inject)
				_, err := f.s.Rewind(ctx, f.target, RestoreOptions{})
				f.s.objects.Fault = nil
				got := readState(t, f.root)
				dBefore, dTarget := diffStates(f.before, got), diffStates(f.wanted, got)
				switch {
				case err == nil && dTarget != "":
					t.Fatalf("read %d of %d failing with %v: the rewind succeeded but the workspace is not the target:\n%s", n, total, inject, dTarget)
				case err != nil && dBefore != "":
					t.Fatalf("read %d of %d failing with %v: %v\nand the workspace is not the state before:\n%s", n, total, inject, err, dBefore)
				case err != nil && !strings.Contains(err.Error(), "put back to the safety checkpoint") && !strings.Contains(err.Error(), "nothing was changed"):
					t.Fatalf("read %d failing with %v: the error does not say what became of the workspace: %v", n, inject, err)
				case err != nil:
					undone++
				}
				if _, err := os.Lstat(filepath.Join(f.s.StateDir(), "journal")); !os.IsNotExist(err) {
					t.Fatalf("read %d failing with %v: journal left: %v", n, inject, err)
				}
				if _, err := f.s.Checkpoint(ctx, "next"); err != nil {
					t.Fatalf("read %d failing with %v: the next command fails: %v", n, inject, err)
				}
			}
			t.Logf("%d of %d reads failed one at a time: %d rewinds undone or refused, the others completed", (total+step-1)/step, total, undone)
		})
	}
}

// TestRecoveryUndoneOnReadFailure: a rewind interrupted half-way (part of the target written,
// the journal in place) whose target then cannot be read (an I/O error, not a hash mismatch) is
// undone by the next command: back to the safety checkpoint, not a mix, not a stuck store.
func TestRecoveryUndoneOnReadFailure(t *testing.T) {
	f := newReadFailSetup(t, false)
	safety, err := f.s.Checkpoint(ctx, "the state before the rewind")
	if err != nil {
		t.Fatal(err)
	}
	put(t, f.root, "d0/f000.txt", "file 0, first version\n", 0o644) // half restored
	os.RemoveAll(filepath.Join(f.root, "new"))
	j := &Journal{Op: "rewind", OpID: "00112233aabbccdd", From: safety.ID, To: f.target, Safety: safety.ID, Time: time.Now()}
	if err := f.s.writeJournal(j); err != nil {
		t.Fatal(err)
	}
	entries, _ := f.s.Entries(f.target)
	var bad string
	for _, e := range entries {
		if e.Path == "d1/f001.txt" {
			bad = f.s.objects.Path(e.Blob)
		}
	}
	f.s.objects.Fault = func(name string) error {
		if name == bad {
			return syscall.EIO
		}
		return nil
	}
	if _, err := f.s.Checkpoint(ctx, "next command"); err != nil {
		t.Fatal(err)
	}
	if d := diffStates(f.before, readState(t, f.root)); d != "" {
		t.Fatalf("after recovery the workspace is not the state before the rewind:\n%s", d)
	}
	if rec := f.s.Recovered(); rec == nil || rec.Outcome != "undone" {
		t.Fatalf("recovery: %+v", rec)
	}
}

// TestDamagedObjectFilesUndone damages the target's stored contents for real: an object replaced
// by a directory, an object cut short, a pack cut short. The rewind is undone, never left half
// done, and says so.
func TestDamagedObjectFilesUndone(t *testing.T) {
	for _, tc := range []struct {
		name   string
		packed bool
		damage func(t *testing.T, f *readFailSetup, object string)
	}{
		{"object is a directory", false, func(t *testing.T, f *readFailSetup, object string) {
			os.Remove(object)
			if err := os.Mkdir(object, 0o700); err != nil {
				t.Fatal(err)
			}
		}},
		{"object cut short", false, func(t *testing.T, f *readFailSetup, object string) {
			os.Truncate(object, 3)
		}},
		{"pack cut short", true, func(t *testing.T, f *readFailSetup, object string) {
			// Cut the pack inside the object the rewind must read (the pack also holds the
			// target's manifest trees, read before this point).
			h, err := ParseHash(filepath.Base(filepath.Dir(object)) + filepath.Base(object))
			if err != nil {
				t.Fatal(err)
			}
			loc, ok, err := f.s.objects.Packed(h)
			if !ok || err != nil {
				t.Fatalf("object %s not packed: %v", h, err)
			}
			os.Truncate(loc.Pack, loc.Off+1)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newReadFailSetup(t, tc.packed)
			entries, _ := f.s.Entries(f.target)
			var object string
			for _, e := range entries {
				if e.Path == "d2/f005.txt" { // deleted since: the rewind must read it
					object = f.s.objects.Path(e.Blob)
				}
			}
			// Damage after the safety checkpoint, when the restore is about to read the target.
			f.s.beforeApply = func() { tc.damage(t, f, object) }
			_, err := f.s.Rewind(ctx, f.target, RestoreOptions{})
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "put back to the safety checkpoint") {
				t.Fatalf("rewind from damaged contents: %v", err)
			}
			if d := diffStates(f.before, readState(t, f.root)); d != "" {
				t.Fatalf("the workspace is a mix:\n%s", d)
			}
			if _, err := os.Lstat(filepath.Join(f.s.StateDir(), "journal")); !os.IsNotExist(err) {
				t.Fatalf("journal left: %v", err)
			}
			f.s.beforeApply = nil
			if tl, err := f.s.List(); err != nil || tl.Last == nil || tl.Current != tl.Last.Safety {
				t.Fatalf("position after the undo: %+v %v", tl, err)
			}
		})
	}
}

// TestUnreadableTargetManifest: a target whose manifest cannot be read (a directory in its place)
// fails a rewind before anything is touched, and makes the recovery of an interrupted one undo it.
func TestUnreadableTargetManifest(t *testing.T) {
	f := newReadFailSetup(t, false)
	meta, err := f.s.Get(f.target)
	if err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(f.s.StateDir(), "manifests", meta.Manifest.String())
	os.Remove(manifest)
	os.Mkdir(manifest, 0o700)
	if _, err := f.s.Rewind(ctx, f.target, RestoreOptions{}); err == nil {
		t.Fatal("rewind to a target whose manifest is a directory succeeded")
	}
	if d := diffStates(f.before, readState(t, f.root)); d != "" {
		t.Fatalf("the failed rewind changed the workspace:\n%s", d)
	}
	safety, err := f.s.Checkpoint(ctx, "the state before the rewind")
	if err != nil {
		t.Fatal(err)
	}
	put(t, f.root, "d0/f000.txt", "file 0, first version\n", 0o644) // half restored
	f.s.writeJournal(&Journal{Op: "rewind", OpID: "01", From: safety.ID, To: f.target, Safety: safety.ID, Time: time.Now()})
	if _, err := f.s.Checkpoint(ctx, "next command"); err != nil {
		t.Fatal(err)
	}
	if d := diffStates(f.before, readState(t, f.root)); d != "" {
		t.Fatalf("recovery did not undo:\n%s", d)
	}
	if rec := f.s.Recovered(); rec == nil || rec.Outcome != "undone" {
		t.Fatalf("recovery: %+v", rec)
	}
}
