package snapshot

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agent-rewind/rewind/snapshot/internal/platform"
)

// TestCaptureMergePairsEveryPath: the capture pairs each live file with its stat cache entry in
// one pass over both sorted lists; with paths removed, added and sorting around "/" between
// them, every unchanged file is vouched for by the cache (none read) and every new or changed
// one is read, nothing else.
func TestCaptureMergePairsEveryPath(t *testing.T) {
	root := t.TempDir()
	s := mustOpen(t, root, Options{})
	var all []string
	for _, d := range []string{"a", "a-b", "a.b", "a/b", "a/b-c", "a0", "b"} {
		for i := range 6 {
			p := fmt.Sprintf("%s/f%d", d, i)
			put(t, root, p, "x "+p, 0o644)
			all = append(all, p)
		}
	}
	put(t, root, "a!", "top", 0o644)
	os.Symlink("a0/f1", filepath.Join(root, "a-link"))
	if _, err := s.Checkpoint(ctx, "base"); err != nil {
		t.Fatal(err)
	}
	// Every third file removed (the cache keeps entries the walk no longer sees), new files
	// between the kept ones (live entries the cache lacks), one changed.
	changed := map[string]bool{}
	for i, p := range all {
		if i%3 == 0 {
			os.Remove(filepath.Join(root, p))
		}
		if i%4 == 1 {
			put(t, root, p+"-new", "new", 0o644)
			changed[p+"-new"] = true
		}
	}
	put(t, root, "a/b/f4", "changed, longer", 0o644)
	changed["a/b/f4"] = true
	backdateIndex(t, s)
	c, err := s.captureLive(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range c.scan.entries {
		if e.Type != TypeFile {
			continue
		}
		if e.cached == changed[e.Path] {
			t.Errorf("%s: vouched for by the cache %v, changed %v", e.Path, e.cached, changed[e.Path])
		}
	}
	if c.hashed != len(changed) {
		t.Fatalf("read %d files, want the %d new or changed", c.hashed, len(changed))
	}
}

// TestIndexChanges: the log record of a capture is what turns the old cache into the new one,
// compared as both stream by, the old read in place: new, changed and racily clean entries set,
// vanished paths removed, settled equal entries left out.
func TestIndexChanges(t *testing.T) {
	h := Hash{1}
	st := func(size int64) platform.Stat { return platform.Stat{Mode: 0o100644, Size: size, Mtime: 10} }
	old := []indexEntry{
		{Path: "", St: platform.Stat{Mode: 0o40755, Mtime: 10}, Blob: h},
		{Path: "a", St: st(1), Blob: h},
		{Path: "a-b", St: st(2), Blob: h},                                    // removed
		{Path: "a/b", St: st(3), Blob: h},                                    // changed
		{Path: "a/c", St: platform.Stat{Mode: 0o100644, Mtime: 99}, Blob: h}, // racily clean
		{Path: "z", St: st(4), Blob: h},                                      // removed, last
	}
	data := encodeIndex(old, Hash{})
	body, _, err := checkIndex(data)
	if err != nil {
		t.Fatal(err)
	}
	x := &statIndex{body: &body, recorded: 50}
	now := []indexEntry{old[0], old[1], {Path: "a.new", St: st(5), Blob: h}, {Path: "a/b", St: st(30), Blob: h}, old[4]}
	set, removed := indexChanges(x.cursor(), slices.Values(now))
	var got []string
	for _, e := range set {
		got = append(got, e.Path)
	}
	if want := []string{"a.new", "a/b", "a/c"}; !slices.Equal(got, want) {
		t.Errorf("set %q, want %q", got, want)
	}
	if want := []string{"a-b", "z"}; !slices.Equal(removed, want) {
		t.Errorf("removed %q, want %q", removed, want)
	}
}

// TestIndexCursorAppliesLog: a stat cache read in place, its log merged in by the cursor, holds
// what the index decoded whole with its log applied holds, over random indexes and logs that set,
// replace and remove paths old and new.
func TestIndexCursorAppliesLog(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	name := func() string { return fmt.Sprintf("%c/%c", 'a'+r.IntN(4), 'a'+r.IntN(6)) }
	for trial := range 50 {
		index := filepath.Join(t.TempDir(), "index")
		seen := map[string]bool{}
		var base []indexEntry
		for range r.IntN(12) {
			if p := name(); !seen[p] {
				seen[p] = true
				base = append(base, indexEntry{Path: p, St: platform.Stat{Mode: 0o100644, Size: int64(r.IntN(9))}, Blob: Hash{byte(r.IntN(9))}})
			}
		}
		sortIndex(base)
		data := encodeIndex(base, Hash{})
		if err := os.WriteFile(index, data, 0o600); err != nil {
			t.Fatal(err)
		}
		sum := binary.LittleEndian.Uint32(data[len(data)-4:])
		for range r.IntN(4) {
			var set []indexEntry
			var removed []string
			picked := map[string]bool{}
			for range r.IntN(5) {
				p := name()
				if picked[p] {
					continue
				}
				picked[p] = true
				if r.IntN(3) == 0 {
					removed = append(removed, p)
				} else {
					set = append(set, indexEntry{Path: p, St: platform.Stat{Mode: 0o100644, Size: 100}, Blob: Hash{byte(trial)}})
				}
			}
			sortIndex(set)
			slices.Sort(removed)
			if err := appendIndexLog(index, sum, encodeLogRecord(set, removed)); err != nil {
				t.Fatal(err)
			}
		}
		st, _ := platform.Lstat(index)
		whole, _, err := decodeIndex(data)
		if err != nil {
			t.Fatal(err)
		}
		for i := range whole {
			whole[i].recorded = st.Mtime
		}
		log, err := readIndexLog(index)
		if err != nil {
			t.Fatal(err)
		}
		want, _, _ := applyIndexLog(whole, sum, log)
		x, _, err := loadIndexLazy(index)
		if err != nil {
			t.Fatal(err)
		}
		var got []indexEntry
		c := x.cursor()
		for ; c.entry() != nil; c.advance() {
			got = append(got, *c.entry())
		}
		if len(got) != len(want) || c.count != len(want) {
			t.Fatalf("trial %d: read %d entries (counted %d), want %d", trial, len(got), c.count, len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("trial %d, entry %d: read %+v, want %+v", trial, i, got[i], want[i])
			}
		}
	}
}
