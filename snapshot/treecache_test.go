package snapshot

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
	"github.com/agent-rewind/rewind/snapshot/internal/walk"
)

// scratchManifest is the manifest hash of the live workspace computed from nothing: a walk,
// every file read, every tree encoded.
func scratchManifest(t *testing.T, s *Store) Hash {
	t.Helper()
	ign, err := s.loadIgnore()
	if err != nil {
		t.Fatal(err)
	}
	var seen, n atomic.Int64
	sc, err := walk.Walk(ctx, s.root, s.stateRel, ign, 2, &seen)
	if err != nil {
		t.Fatal(err)
	}
	for i := range sc.Entries {
		if e := &sc.Entries[i]; e.Type == TypeFile {
			if e.Blob, err = hashFile(filepath.Join(s.root, e.Path), e.St, nil, &n); err != nil {
				t.Fatalf("hash %s: %v", e.Path, err)
			}
		}
	}
	return manifest.EncodeTrees(len(sc.Entries), func(i int) *Entry { return &sc.Entries[i].Entry }, nil).Hash
}

// TestTreeCacheMatchesScratch: a checkpoint that reuses the cached trees of unchanged folders
// names the same manifest as one computed from nothing, over rounds of random changes that
// leave a folder's or file's stat as equal as user space can (a content rewrite of the same size
// with its mtime put back, a folder's mtime put back after a file is added), renames within a
// folder, chmod of files and folders, symlinks retargeted, types swapped, exclusion rules
// edited; and the cache is in fact reused (the trees of unchanged folders are not encoded).
func TestTreeCacheMatchesScratch(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			root := t.TempDir()
			s := mustOpen(t, root, Options{})
			r := rand.New(rand.NewPCG(seed, 7))
			dirs := []string{"a", "a/b", "a/b/c", "d", "d/e", "f"}
			for _, d := range dirs {
				os.MkdirAll(filepath.Join(root, d), 0o755)
			}
			for i := range 60 {
				put(t, root, fmt.Sprintf("%s/f%02d.txt", dirs[i%len(dirs)], i), fmt.Sprintf("content %d", i), 0o644)
			}
			os.Symlink("f00.txt", filepath.Join(root, "a/link"))
			if _, err := s.Checkpoint(ctx, "base"); err != nil {
				t.Fatal(err)
			}
			reusedRounds := 0
			var ids []string
			for round := range 40 {
				// Half the rounds see every entry settled (nothing racily clean), so the cache
				// is trusted as far as the stats allow; the others run at full speed.
				if round%2 == 0 {
					backdateIndex(t, s)
				}
				mutateStats(t, r, root, dirs)
				if round%5 == 4 {
					// A rewind to an earlier checkpoint: the cache keeps the trees of the
					// folders it did not touch.
					to := ids[r.IntN(len(ids))]
					if _, err := s.Rewind(ctx, to, RestoreOptions{}); err != nil {
						t.Fatal(err)
					}
				}
				want := scratchManifest(t, s)
				c, err := s.Checkpoint(ctx, fmt.Sprint(round))
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, c.ID)
				if c.Manifest != want {
					t.Fatalf("round %d: checkpoint names manifest %s, a walk from scratch %s", round, c.Manifest, want)
				}
				// And an unchanged tree, with everything settled, reuses the root's tree.
				backdateIndex(t, s)
				cp, err := s.captureLive(ctx, false)
				if err != nil {
					t.Fatal(err)
				}
				if _, ok := cp.reusableTrees()[""]; ok {
					reusedRounds++
				}
				if c2, err := s.Checkpoint(ctx, "again"); err != nil || c2.Manifest != want {
					t.Fatalf("round %d, unchanged: manifest %s, want %s (%v)", round, c2.Manifest, want, err)
				}
			}
			if reusedRounds < 35 {
				t.Fatalf("the root's tree was reused in %d rounds of 40 without a change", reusedRounds)
			}
		})
	}
}

// mutateStats makes one to three random changes of the kinds a stat cache must not miss.
func mutateStats(t *testing.T, r *rand.Rand, root string, dirs []string) {
	t.Helper()
	pick := func() string {
		d := dirs[r.IntN(len(dirs))]
		names, _ := os.ReadDir(filepath.Join(root, d))
		var files []string
		for _, n := range names {
			if n.Type().IsRegular() {
				files = append(files, filepath.Join(d, n.Name()))
			}
		}
		if len(files) == 0 {
			put(t, root, d+"/new.txt", "new", 0o644)
			return d + "/new.txt"
		}
		return files[r.IntN(len(files))]
	}
	old := time.Now().Add(-time.Hour)
	for range 1 + r.IntN(3) {
		switch k := r.IntN(10); k {
		case 0: // same size, new content, mtime put back
			p := pick()
			full := filepath.Join(root, p)
			fi, _ := os.Stat(full)
			b, _ := os.ReadFile(full)
			for i := range b {
				b[i] ^= 0x20
			}
			os.WriteFile(full, b, 0o644)
			os.Chtimes(full, fi.ModTime(), fi.ModTime())
		case 1: // same size rewrite at once (within the timestamp granularity)
			p := pick()
			b, _ := os.ReadFile(filepath.Join(root, p))
			if len(b) > 0 {
				b[0] ^= 1
			}
			os.WriteFile(filepath.Join(root, p), b, 0o644)
		case 2: // rename within its folder
			p := pick()
			os.Rename(filepath.Join(root, p), filepath.Join(root, p+".renamed"))
		case 3: // chmod a file
			p := pick()
			os.Chmod(filepath.Join(root, p), 0o700|os.FileMode(r.IntN(2))*0o055)
		case 4: // chmod a folder
			d := dirs[r.IntN(len(dirs))]
			os.Chmod(filepath.Join(root, d), 0o700|os.FileMode(r.IntN(2))*0o055)
		case 5: // a file added, the folder's mtime put back
			d := dirs[r.IntN(len(dirs))]
			full := filepath.Join(root, d)
			fi, _ := os.Stat(full)
			put(t, root, fmt.Sprintf("%s/added%d.txt", d, r.IntN(1000)), "added", 0o644)
			os.Chtimes(full, fi.ModTime(), fi.ModTime())
		case 6: // a symlink retargeted (a new link renamed over it)
			tmp := filepath.Join(root, "a/.link-tmp")
			os.Symlink(fmt.Sprintf("f%02d.txt", r.IntN(60)), tmp)
			os.Rename(tmp, filepath.Join(root, "a/link"))
		case 7: // a file removed, or turned into a folder
			p := pick()
			os.Remove(filepath.Join(root, p))
			if r.IntN(2) == 0 {
				os.Mkdir(filepath.Join(root, p), 0o755)
				os.Chtimes(filepath.Join(root, p), old, old)
			}
		case 8: // the exclusion rules change
			put(t, root, IgnoreFile, fmt.Sprintf("*%d.txt\n", r.IntN(10)), 0o644)
		case 9: // two files of one folder swap names
			d := dirs[r.IntN(len(dirs))]
			names, _ := os.ReadDir(filepath.Join(root, d))
			var files []string
			for _, n := range names {
				if n.Type().IsRegular() {
					files = append(files, filepath.Join(root, d, n.Name()))
				}
			}
			if len(files) >= 2 {
				os.Rename(files[0], files[0]+".swap")
				os.Rename(files[1], files[0])
				os.Rename(files[0]+".swap", files[1])
			}
		}
	}
}

// TestTreeCacheRootNotStored: when the manifest of a reused root tree is gone (removed by hand),
// the checkpoint encodes every tree and writes it again, rather than naming what is not stored.
func TestTreeCacheRootNotStored(t *testing.T) {
	root := t.TempDir()
	s := mustOpen(t, root, Options{})
	put(t, root, "a/b.txt", "b", 0o644)
	c1, err := s.Checkpoint(ctx, "one")
	if err != nil {
		t.Fatal(err)
	}
	backdateIndex(t, s)
	if err := os.Remove(filepath.Join(s.StateDir(), "manifests", c1.Manifest.String())); err != nil {
		t.Fatal(err)
	}
	c2, err := s.Checkpoint(ctx, "two")
	if err != nil {
		t.Fatal(err)
	}
	if c2.Manifest != c1.Manifest {
		t.Fatalf("manifest %s, want %s", c2.Manifest, c1.Manifest)
	}
	if _, _, err := s.readManifestTrees(c2.Manifest); err != nil {
		t.Fatalf("the manifest was not written again: %v", err)
	}
}

// TestTreeCacheAfterRewind: a rewind leaves the trees of the folders it did not touch cached, so
// the next checkpoint encodes only the touched folder and its ancestors.
func TestTreeCacheAfterRewind(t *testing.T) {
	root := t.TempDir()
	s := mustOpen(t, root, Options{})
	for _, d := range []string{"a", "b", "c/d"} {
		put(t, root, d+"/f.txt", d, 0o644)
	}
	c1, err := s.Checkpoint(ctx, "one")
	if err != nil {
		t.Fatal(err)
	}
	put(t, root, "a/f.txt", "changed", 0o644)
	backdateIndex(t, s)
	if _, err := s.Rewind(ctx, c1.ID, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	backdateIndex(t, s)
	c, err := s.captureLive(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	reuse := c.reusableTrees()
	for _, d := range []string{"b", "c", "c/d"} {
		if _, ok := reuse[d]; !ok {
			t.Errorf("the tree of %s, untouched by the rewind, is not reused (%v)", d, reuse)
		}
	}
	for _, d := range []string{"", "a"} {
		if _, ok := reuse[d]; ok {
			t.Errorf("the tree of %q, touched by the rewind, is reused", d)
		}
	}
	if c2, err := s.Checkpoint(ctx, "two"); err != nil || c2.Manifest != c1.Manifest {
		t.Fatalf("after the rewind: manifest %s, want %s (%v)", c2.Manifest, c1.Manifest, err)
	}
}

// TestRewindReadsOnlyChangedTrees: a rewind takes the target's trees that equal the live ones
// (as its safety checkpoint encoded them) from the live capture, and reads only the others:
// after one file changed in one of 20 folders, it reads that folder's tree, not 20.
func TestRewindReadsOnlyChangedTrees(t *testing.T) {
	root := t.TempDir()
	s := mustOpen(t, root, Options{})
	for i := range 20 {
		put(t, root, fmt.Sprintf("d%02d/f.txt", i), fmt.Sprint(i), 0o644)
	}
	c1, err := s.Checkpoint(ctx, "one")
	if err != nil {
		t.Fatal(err)
	}
	want := readState(t, root)
	put(t, root, "d07/f.txt", "changed", 0o644)
	reads := 0
	s.objects.Fault = func(name string) error {
		if strings.HasSuffix(name, ".pack") {
			reads++
		}
		return nil
	}
	if _, err := s.Rewind(ctx, c1.ID, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if d := diffStates(want, readState(t, root)); d != "" {
		t.Fatalf("after the rewind:\n%s", d)
	}
	// d07's tree, and d07/f.txt's content (an open and its reads); where modes are not all
	// kept (Windows), the safety checkpoint reads the current checkpoint's d07 tree too, for
	// the modes of what changed in it (modes.go).
	limit := 5
	if manifest.ModeBitsKept != 0o7777 {
		limit += 2
	}
	if reads > limit {
		t.Fatalf("the rewind read packs %d times: it read trees equal to the live ones", reads)
	}
}

// TestTreeCacheRootStatBeforeListing: a file removed after the walk listed its folder, and before
// the checkpoint ends, is in that checkpoint; the folder's cached stat must be from before the
// listing (the root's too), so that the next checkpoint sees the removal instead of reusing the
// tree that lists it.
func TestTreeCacheRootStatBeforeListing(t *testing.T) {
	root := t.TempDir()
	s := mustOpen(t, root, Options{})
	put(t, root, "a.txt", "a", 0o644)
	put(t, root, "b.txt", "b", 0o644)
	put(t, root, "d/c.txt", "c", 0o644)
	put(t, root, "d/e.txt", "e", 0o644)
	if _, err := s.Checkpoint(ctx, "one"); err != nil {
		t.Fatal(err)
	}
	backdateIndex(t, s)
	testHookAfterScan = func() {
		os.Remove(filepath.Join(root, "b.txt"))
		os.Remove(filepath.Join(root, "d/c.txt"))
	}
	_, err := s.Checkpoint(ctx, "two")
	testHookAfterScan = nil
	if err != nil {
		t.Fatal(err)
	}
	backdateIndex(t, s)
	want := scratchManifest(t, s)
	c, err := s.Checkpoint(ctx, "three")
	if err != nil || c.Manifest != want {
		t.Fatalf("after the removal: manifest %s, a walk from scratch %s (%v)", c.Manifest, want, err)
	}
}
