package snapshot

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/snapshot/internal/statcache"
)

// sampleWorkspace writes n distinct small files, dated an hour ago so that the stat cache can
// vouch for them at once (none is racily clean), and opens a store on it.
func sampleWorkspace(t *testing.T, n int) (string, *Store) {
	t.Helper()
	root := t.TempDir()
	old := time.Now().Add(-time.Hour)
	for i := range n {
		rel := fmt.Sprintf("f%02d.txt", i)
		put(t, root, rel, fmt.Sprintf("content of file %d\n", i), 0o644)
		if err := os.Chtimes(filepath.Join(root, rel), old, old); err != nil {
			t.Fatal(err)
		}
	}
	return root, mustOpen(t, root, Options{})
}

// swapCacheBlobs rewrites the stat cache with the blobs of paths a and b swapped and its CRC
// recomputed: a cache that passes its checksum and lies about two files.
func swapCacheBlobs(t *testing.T, s *Store, a, b string) {
	t.Helper()
	name := filepath.Join(s.StateDir(), "index")
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	entries, rules, err := statcache.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	ia, ib := -1, -1
	for i := range entries {
		switch entries[i].Path {
		case a:
			ia = i
		case b:
			ib = i
		}
	}
	if ia < 0 || ib < 0 {
		t.Fatalf("stat cache lacks %s or %s", a, b)
	}
	entries[ia].Blob, entries[ib].Blob = entries[ib].Blob, entries[ia].Blob
	if err := os.WriteFile(name, statcache.Encode(entries, rules), 0o600); err != nil {
		t.Fatal(err)
	}
}

// checkTrue fails unless checkpoint id records every file's true content.
func checkTrue(t *testing.T, s *Store, root, id string) {
	t.Helper()
	entries, err := s.checkpointEntries(id)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Type != TypeFile {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, e.Path))
		if err != nil {
			t.Fatal(err)
		}
		if Hash(sha256.Sum256(b)) != e.Blob {
			t.Errorf("checkpoint %s records %s as %s, not its content", id, e.Path, e.Blob)
		}
	}
}

func isDistrust(warnings []string) bool {
	for _, w := range warnings {
		if strings.Contains(w, "stat cache vouched for content") {
			return true
		}
	}
	return false
}

// TestSampleFindsSwappedCache: a stat cache with two blobs swapped (and a valid CRC) is caught by
// the sample within a few checkpoints; the catching checkpoint and the next are true.
func TestSampleFindsSwappedCache(t *testing.T) {
	root, s := sampleWorkspace(t, 12)
	if _, err := s.Checkpoint(ctx, "first"); err != nil {
		t.Fatal(err)
	}
	swapCacheBlobs(t, s, "f03.txt", "f07.txt")
	// 8 of 12 files are sampled: a checkpoint misses both swapped ones with p = 45/495, so
	// 30 checkpoints all miss with p < 1e-31.
	for try := 1; ; try++ {
		if try > 30 {
			t.Fatal("30 checkpoints trusted a stat cache with two swapped blobs")
		}
		res, err := s.Checkpoint(ctx, fmt.Sprint("try ", try))
		if err != nil {
			t.Fatal(err)
		}
		if res.Verified != sampleMin {
			t.Fatalf("checkpoint verified %d files, want %d", res.Verified, sampleMin)
		}
		if !isDistrust(res.Warnings) {
			continue
		}
		t.Logf("caught at checkpoint %d: %s", try, res.Warnings)
		if res.Hashed != 12 {
			t.Errorf("the catching checkpoint read %d files, want all 12", res.Hashed)
		}
		checkTrue(t, s, root, res.ID)
		break
	}
	next, err := s.Checkpoint(ctx, "after")
	if err != nil {
		t.Fatal(err)
	}
	if isDistrust(next.Warnings) || next.Hashed != 0 {
		t.Errorf("after the rebuild: warnings %q, hashed %d (want none, 0)", next.Warnings, next.Hashed)
	}
	checkTrue(t, s, root, next.ID)
}

// TestSampleDiffNoPhantom: diff against the live workspace with a lying stat cache shows a
// phantom change only until the sample catches it; from then on, none.
func TestSampleDiffNoPhantom(t *testing.T) {
	_, s := sampleWorkspace(t, 12)
	first, err := s.Checkpoint(ctx, "first")
	if err != nil {
		t.Fatal(err)
	}
	swapCacheBlobs(t, s, "f03.txt", "f07.txt")
	caught := false
	for try := 1; try <= 30 && !caught; try++ {
		d, err := s.Diff(ctx, first.ID, "")
		if err != nil {
			t.Fatal(err)
		}
		caught = isDistrust(d.Warnings)
		if caught && len(d.Changes) != 0 {
			t.Fatalf("the diff that caught the cache shows %d changes: %+v", len(d.Changes), d.Changes)
		}
	}
	if !caught {
		t.Fatal("30 diffs trusted a stat cache with two swapped blobs")
	}
	for range 5 {
		d, err := s.Diff(ctx, first.ID, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Changes) != 0 {
			t.Fatalf("phantom changes after the cache was caught: %+v", d.Changes)
		}
	}
}

// TestSampleTrustsTrueCache: a true cache is never distrusted, and the sample is not counted as
// files hashed.
func TestSampleTrustsTrueCache(t *testing.T) {
	_, s := sampleWorkspace(t, 20)
	if _, err := s.Checkpoint(ctx, "first"); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		res, err := s.Checkpoint(ctx, "again")
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Warnings) != 0 || res.Hashed != 0 || res.Verified != sampleMin {
			t.Fatalf("warnings %q, hashed %d, verified %d", res.Warnings, res.Hashed, res.Verified)
		}
	}
}

func TestSampleCount(t *testing.T) {
	for _, c := range []struct{ n, want int }{{0, 0}, {3, 3}, {8, 8}, {2000, 8}, {2048, 8}, {4096, 16}, {100000, 390}} {
		if got := sampleCount(c.n); got != c.want {
			t.Errorf("sampleCount(%d) = %d, want %d", c.n, got, c.want)
		}
	}
}
