package statcache

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agent-rewind/rewind/snapshot/internal/objects"

	"github.com/agent-rewind/rewind/snapshot/internal/platform"
)

// TestIndexChanges: the log record of a capture is what turns the old cache into the new one,
// compared as both stream by, the old read in place: new, changed and racily clean entries set,
// vanished paths removed, settled equal entries left out.
func TestIndexChanges(t *testing.T) {
	h := objects.Hash{1}
	st := func(size int64) platform.Stat { return platform.Stat{Mode: 0o100644, Size: size, Mtime: 10} }
	old := []Entry{
		{Path: "", St: platform.Stat{Mode: 0o40755, Mtime: 10}, Blob: h},
		{Path: "a", St: st(1), Blob: h},
		{Path: "a-b", St: st(2), Blob: h},                                    // removed
		{Path: "a/b", St: st(3), Blob: h},                                    // changed
		{Path: "a/c", St: platform.Stat{Mode: 0o100644, Mtime: 99}, Blob: h}, // racily clean
		{Path: "z", St: st(4), Blob: h},                                      // removed, last
	}
	data := Encode(old, objects.Hash{})
	body, _, err := Check(data)
	if err != nil {
		t.Fatal(err)
	}
	x := &Index{Body: &body, Recorded: 50}
	now := []Entry{old[0], old[1], {Path: "a.new", St: st(5), Blob: h}, {Path: "a/b", St: st(30), Blob: h}, old[4]}
	set, removed := Changes(x.Cursor(), slices.Values(now))
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
		var base []Entry
		for range r.IntN(12) {
			if p := name(); !seen[p] {
				seen[p] = true
				base = append(base, Entry{Path: p, St: platform.Stat{Mode: 0o100644, Size: int64(r.IntN(9))}, Blob: objects.Hash{byte(r.IntN(9))}})
			}
		}
		Sort(base)
		data := Encode(base, objects.Hash{})
		if err := os.WriteFile(index, data, 0o600); err != nil {
			t.Fatal(err)
		}
		sum := binary.LittleEndian.Uint32(data[len(data)-4:])
		for range r.IntN(4) {
			var set []Entry
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
					set = append(set, Entry{Path: p, St: platform.Stat{Mode: 0o100644, Size: 100}, Blob: objects.Hash{byte(trial)}})
				}
			}
			Sort(set)
			slices.Sort(removed)
			if err := AppendLog(index, sum, EncodeLogRecord(set, removed)); err != nil {
				t.Fatal(err)
			}
		}
		st, _ := platform.Lstat(index)
		whole, _, err := Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		for i := range whole {
			whole[i].Recorded = st.Mtime
		}
		log, err := ReadLog(index)
		if err != nil {
			t.Fatal(err)
		}
		want, _, _ := applyIndexLog(whole, sum, log)
		x, _, err := LoadLazy(index)
		if err != nil {
			t.Fatal(err)
		}
		var got []Entry
		c := x.Cursor()
		for ; c.Entry() != nil; c.Advance() {
			got = append(got, *c.Entry())
		}
		if len(got) != len(want) || c.Count != len(want) {
			t.Fatalf("trial %d: read %d entries (counted %d), want %d", trial, len(got), c.Count, len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("trial %d, entry %d: read %+v, want %+v", trial, i, got[i], want[i])
			}
		}
	}
}

func FuzzDecodeIndex(f *testing.F) {
	h, _ := objects.ParseHash(blobA)
	f.Add(Encode([]Entry{{Path: "", St: platform.Stat{Mode: 0o40755}, Blob: h}, {Path: "a", St: platform.Stat{Mode: 0o100644, Size: 5, Mtime: 1, Ctime: 2, Ino: 3}, Blob: h}, {Path: "b/c", Blob: h}}, h))
	f.Add(Encode(nil, objects.Hash{}))
	f.Add([]byte(Magic + "\xff\xff\xff\xff"))
	f.Add([]byte(MagicV1 + "\x00\x00\x00\x00\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, rules, err := Decode(data)
		// Version 1 is read, never written: only a version 2 index re-encodes to itself.
		if err == nil && bytes.HasPrefix(data, []byte(Magic)) && !bytes.Equal(Encode(entries, rules), data) {
			t.Fatal("accepted an index that does not re-encode to itself")
		}
		// A capture reads the same entries in place (loadIndexLazy, cursor).
		body, _, lazyErr := Check(data)
		if (lazyErr == nil) != (err == nil) {
			t.Fatalf("decodeIndex: %v; checkIndex: %v", err, lazyErr)
		}
		if err != nil {
			return
		}
		c := (&Index{Body: &body}).Cursor()
		for i := range entries {
			if e := c.Entry(); e == nil || *e != entries[i] {
				t.Fatalf("entry %d read in place %+v, decoded %+v", i, e, entries[i])
			}
			c.Advance()
		}
		if c.Entry() != nil {
			t.Fatal("read in place more entries than decoded")
		}
	})
}
