package snapshot

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/snapshot/internal/objects"
)

// checkKinds runs Check and returns the kinds of the problems found, and of those repaired.
func checkKinds(t *testing.T, s *Store, opts CheckOptions) (found, repaired []string) {
	t.Helper()
	rep, err := s.Check(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, sec := range rep.Sections {
		if sec.Problems == nil {
			t.Errorf("section %s: problems is nil, want []", sec.Name)
		}
		for _, p := range sec.Problems {
			if p.Where == "" || p.What == "" || p.Fix == "" {
				t.Errorf("problem without where, what or fix: %+v", p)
			}
			found = append(found, p.Kind)
			if p.Repaired {
				repaired = append(repaired, p.Kind)
			}
		}
	}
	return found, repaired
}

// checkedStore is a workspace of 12 files with one checkpoint (loose objects only).
func checkedStore(t *testing.T) (string, *Store, *CheckpointResult) {
	t.Helper()
	root, s := sampleWorkspace(t, 12)
	cp, err := s.Checkpoint(ctx, "first")
	if err != nil {
		t.Fatal(err)
	}
	loosen(t, s) // the damage below is done to object files
	return root, s, cp
}

func objectOf(t *testing.T, s *Store, root, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return s.objects.Path(Hash(sha256.Sum256(b)))
}

func TestCheckFindsDamage(t *testing.T) {
	for _, c := range []struct {
		name     string
		readData bool
		damage   func(t *testing.T, root string, s *Store, cp *CheckpointResult)
		want     string
	}{
		{"clean", false, func(*testing.T, string, *Store, *CheckpointResult) {}, ""},
		{"missing object", false, func(t *testing.T, root string, s *Store, _ *CheckpointResult) {
			os.Remove(objectOf(t, s, root, "f02.txt"))
		}, "object-missing"},
		{"truncated object", false, func(t *testing.T, root string, s *Store, _ *CheckpointResult) {
			os.Truncate(objectOf(t, s, root, "f02.txt"), 3)
		}, "object-corrupt"},
		{"corrupt object (same size) with read-data", true, func(t *testing.T, root string, s *Store, _ *CheckpointResult) {
			name := objectOf(t, s, root, "f02.txt")
			b, _ := os.ReadFile(name)
			b[0] ^= 1
			os.WriteFile(name, b, 0o600)
		}, "object-corrupt"},
		{"bad manifest", false, func(t *testing.T, _ string, s *Store, cp *CheckpointResult) {
			os.WriteFile(filepath.Join(s.StateDir(), "manifests", cp.Manifest.String()), []byte("rewind-manifest 1 0\n"), 0o600)
		}, "manifest-corrupt"},
		{"missing manifest", false, func(t *testing.T, _ string, s *Store, cp *CheckpointResult) {
			os.Remove(filepath.Join(s.StateDir(), "manifests", cp.Manifest.String()))
		}, "manifest-missing"},
		{"bad checkpoint file", false, func(t *testing.T, _ string, s *Store, cp *CheckpointResult) {
			name := filepath.Join(s.StateDir(), "checkpoints", cp.ID)
			b, _ := os.ReadFile(name)
			os.WriteFile(name, append(b, ' '), 0o600)
		}, "checkpoint-corrupt"},
		{"stale stat cache entry", false, func(t *testing.T, _ string, s *Store, _ *CheckpointResult) {
			swapCacheBlobs(t, s, "f03.txt", "f07.txt")
		}, "stat-cache-stale"},
		{"torn stat cache", false, func(t *testing.T, _ string, s *Store, _ *CheckpointResult) {
			os.Truncate(filepath.Join(s.StateDir(), "index"), 20)
		}, "stat-cache-corrupt"},
		{"leftover temp file", false, func(t *testing.T, _ string, s *Store, _ *CheckpointResult) {
			os.WriteFile(filepath.Join(s.StateDir(), "objects", "tmp", "obj-123"), []byte("half"), 0o600)
		}, "leftover"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root, s, cp := checkedStore(t)
			c.damage(t, root, s, cp)
			found, _ := checkKinds(t, s, CheckOptions{ReadData: c.readData})
			if c.want == "" {
				if len(found) != 0 {
					t.Fatalf("a sound store: found %v", found)
				}
				return
			}
			if !slices.Contains(found, c.want) {
				t.Fatalf("found %v, want %s", found, c.want)
			}
		})
	}
}

// TestCheckReadDataOnly: a same-size corruption is invisible without ReadData.
func TestCheckReadDataOnly(t *testing.T) {
	root, s, _ := checkedStore(t)
	name := objectOf(t, s, root, "f02.txt")
	b, _ := os.ReadFile(name)
	b[0] ^= 1
	os.WriteFile(name, b, 0o600)
	if found, _ := checkKinds(t, s, CheckOptions{}); len(found) != 0 {
		t.Fatalf("without read-data: found %v", found)
	}
}

// TestCheckRepair: repair drops a lying stat cache, moves leftovers aside, and a pack without its
// index in which nothing the store names is found too; a second check finds nothing, and the
// next checkpoint records true contents. Leftovers alone do not make check fail (benign).
func TestCheckRepair(t *testing.T) {
	root, s, _ := checkedStore(t)
	swapCacheBlobs(t, s, "f03.txt", "f07.txt")
	tmp := filepath.Join(s.StateDir(), "objects", "tmp", "obj-123")
	os.WriteFile(tmp, []byte("half"), 0o600)
	orphan := filepath.Join(s.StateDir(), "packs", "0123456789abcdef.pack")
	os.WriteFile(orphan, []byte("pack"), 0o600)
	staged := filepath.Join(s.StateDir(), "manifests", ".tmp-"+strings.Repeat("a", 64)+"-1") // by an older version
	os.WriteFile(staged, []byte("rewind-tree 1 0\n"), 0o600)
	pos := filepath.Join(s.StateDir(), ".tmp-position-9")
	os.WriteFile(pos, []byte("{"), 0o600)
	// Another module's temporary file in the state directory is not ours to judge: it may be a
	// write in progress under that module's lock.
	theirs := filepath.Join(s.StateDir(), ".tmp-chain.tree-123")
	os.WriteFile(theirs, []byte("chain"), 0o600)
	rep, err := s.Check(ctx, CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, sec := range rep.Sections {
		for _, p := range sec.Problems {
			if p.Benign != (p.Kind == "leftover") {
				t.Errorf("%s %s: benign %v", p.Kind, p.Where, p.Benign)
			}
		}
	}
	found, repaired := checkKinds(t, s, CheckOptions{Repair: true})
	want := []string{"pack-index-missing", "stat-cache-stale", "stat-cache-stale", "leftover", "leftover", "leftover"}
	if !slices.Equal(found, want) || !slices.Equal(repaired, want) {
		t.Fatalf("found %v, repaired %v; want both %v", found, repaired, want)
	}
	if aside, _ := filepath.Glob(filepath.Join(s.StateDir(), "quarantine", "*", "packs", "0123456789abcdef.pack")); len(aside) != 1 {
		t.Errorf("the pack without an index, holding nothing named, was not moved aside: %v", aside)
	}
	for _, gone := range []string{tmp, orphan, staged, pos, filepath.Join(s.StateDir(), "index")} {
		if _, err := os.Lstat(gone); err == nil {
			t.Errorf("%s is still there", gone)
		}
	}
	if _, err := os.Lstat(theirs); err != nil {
		t.Errorf("another module's temporary file was moved: %v", err)
	}
	aside, _ := filepath.Glob(filepath.Join(s.StateDir(), "quarantine", "*", "objects", "tmp", "obj-123"))
	if len(aside) != 1 {
		t.Errorf("the staged object was not moved aside to quarantine/: %v", aside)
	}
	if found, _ := checkKinds(t, s, CheckOptions{}); len(found) != 0 {
		t.Fatalf("after repair: found %v", found)
	}
	cp, err := s.Checkpoint(ctx, "after repair")
	if err != nil {
		t.Fatal(err)
	}
	checkTrue(t, s, root, cp.ID)
}

// TestCheckRepairStoresFromLive: a missing content and a damaged one that workspace files still
// have are stored again by repair (the damaged copy moved aside); one no file has any more is
// reported, not repaired. A second check finds only that one.
func TestCheckRepairStoresFromLive(t *testing.T) {
	root, s, _ := checkedStore(t)
	missing, damaged, gone := objectOf(t, s, root, "f02.txt"), objectOf(t, s, root, "f05.txt"), objectOf(t, s, root, "f09.txt")
	os.Remove(missing)
	os.Remove(gone)
	b, _ := os.ReadFile(damaged)
	b[0] ^= 1
	os.WriteFile(damaged, b, 0o600)
	put(t, root, "f09.txt", "changed since", 0o644)
	found, repaired := checkKinds(t, s, CheckOptions{ReadData: true, Repair: true})
	slices.Sort(found)
	slices.Sort(repaired)
	// The stat cache vouched for f02.txt's missing content too: it is dropped.
	if !slices.Equal(found, []string{"object-corrupt", "object-missing", "object-missing", "stat-cache-unstored"}) ||
		!slices.Equal(repaired, []string{"object-corrupt", "object-missing", "stat-cache-unstored"}) {
		t.Fatalf("found %v, repaired %v", found, repaired)
	}
	if aside, _ := filepath.Glob(filepath.Join(s.StateDir(), "quarantine", "*", "objects", "*", filepath.Base(damaged))); len(aside) != 1 {
		t.Errorf("the damaged copy was not moved aside: %v", aside)
	}
	found, _ = checkKinds(t, s, CheckOptions{ReadData: true})
	if !slices.Equal(found, []string{"object-missing"}) {
		t.Fatalf("second check: found %v, want only the content no file has", found)
	}
	for _, rel := range []string{"f02.txt", "f05.txt"} {
		want, _ := os.ReadFile(filepath.Join(root, rel))
		if got, err := os.ReadFile(objectOf(t, s, root, rel)); err != nil || string(got) != string(want) {
			t.Errorf("%s: stored again as %q (%v), want %q", rel, got, err, want)
		}
	}
}

// TestCheckPacks: contents in a pack are checked as loose ones are: a flipped byte is found with
// ReadData and repaired from the workspace (a loose copy, read before the packed one); a
// truncated pack is reported, with the contents it held as missing.
func TestCheckPacks(t *testing.T) {
	_, s := sampleWorkspace(t, 100) // more than objects.FewFiles new contents: a pack
	if _, err := s.Checkpoint(ctx, "first"); err != nil {
		t.Fatal(err)
	}
	packs, _ := filepath.Glob(filepath.Join(s.StateDir(), "packs", "*.pack"))
	if len(packs) != 1 {
		t.Fatalf("packs: %v", packs)
	}
	if found, _ := checkKinds(t, s, CheckOptions{ReadData: true}); len(found) != 0 {
		t.Fatalf("a sound packed store: found %v", found)
	}
	b, _ := os.ReadFile(packs[0])
	b[10] ^= 1
	os.WriteFile(packs[0], b, 0o600)
	if found, _ := checkKinds(t, s, CheckOptions{}); len(found) != 0 {
		t.Fatalf("without read-data: found %v", found)
	}
	found, repaired := checkKinds(t, s, CheckOptions{ReadData: true, Repair: true})
	if !slices.Equal(found, []string{"object-corrupt"}) || !slices.Equal(repaired, found) {
		t.Fatalf("flipped byte in the pack: found %v, repaired %v", found, repaired)
	}
	if found, _ := checkKinds(t, s, CheckOptions{ReadData: true}); len(found) != 0 {
		t.Fatalf("after repair: found %v", found)
	}
	os.Truncate(packs[0], int64(len(objects.PackMagic)+100)) // into its objects
	found, _ = checkKinds(t, s, CheckOptions{})
	if len(found) < 2 || found[0] != "pack-corrupt" || found[1] != "object-missing" {
		t.Fatalf("truncated pack: found %v", found)
	}
}
