package statcache

import (
	"slices"
	"testing"

	"github.com/agent-rewind/rewind/snapshot/internal/objects"

	"github.com/agent-rewind/rewind/snapshot/internal/platform"

	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
)

func FuzzApplyIndexLog(f *testing.F) {
	h, _ := objects.ParseHash(blobA)
	base := []Entry{{Path: "a", Blob: h}, {Path: "b/c", Blob: h}}
	body := EncodeLogRecord([]Entry{{Path: "a", St: platform.Stat{Size: 3}, Blob: h}, {Path: "z", Blob: h}}, []string{"b/c"})
	log := append([]byte(LogMagic), 1, 0, 0, 0)
	log = append(log, body...)
	log = append(log, SealLogRecord(body, 42)...)
	f.Add(log)
	f.Add([]byte(LogMagic + "\x01\x00\x00\x00\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, valid, _ := applyIndexLog(append([]Entry(nil), base...), 1, data)
		if valid > len(data) {
			t.Fatalf("valid %d of %d bytes", valid, len(data))
		}
		for i := range entries {
			if manifest.CheckPath(entries[i].Path) != nil || (i > 0 && entries[i-1].Path >= entries[i].Path) {
				t.Fatalf("entries not valid and sorted: %q", entries[i].Path)
			}
		}
	})
}

// TestIndexLogMergesNewPaths: paths new to the cache, before, between and after the index's own,
// are merged in order with the sets and removals of the log's records.
func TestIndexLogMergesNewPaths(t *testing.T) {
	mk := func(paths ...string) []Entry {
		var es []Entry
		for i, p := range paths {
			es = append(es, Entry{Path: p, St: platform.Stat{Size: int64(i + 1)}})
		}
		return es
	}
	base := mk("b", "d", "d/x", "f", "h")
	hdr := append([]byte(LogMagic), 1, 0, 0, 0)
	log := append(hdr, EncodeLogRecord(mk("a", "c", "d.y", "d/w", "z"), []string{"f"})...)
	log = append(log, SealLogRecord(log[len(hdr):], 5)...)
	body := EncodeLogRecord(mk("e", "h"), []string{"a"})
	log = append(log, body...)
	log = append(log, SealLogRecord(body, 6)...)
	out, valid, torn := applyIndexLog(slices.Clone(base), 1, log)
	if torn || valid != len(log) {
		t.Fatalf("valid %d of %d, torn %v", valid, len(log), torn)
	}
	var got []string
	for _, e := range out {
		got = append(got, e.Path)
	}
	if want := []string{"b", "c", "d", "d.y", "d/w", "d/x", "e", "h", "z"}; !slices.Equal(got, want) {
		t.Fatalf("paths %q, want %q", got, want)
	}
}

// blobA is the sha256 of "hello", a content hash for the tests.
const blobA = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
