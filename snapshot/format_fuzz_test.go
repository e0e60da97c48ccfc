package snapshot

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/snapshot/internal/objects"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
)

func FuzzDecodeIndex(f *testing.F) {
	h, _ := ParseHash(blobA)
	f.Add(encodeIndex([]indexEntry{{Path: "", St: platform.Stat{Mode: 0o40755}, Blob: h}, {Path: "a", St: platform.Stat{Mode: 0o100644, Size: 5, Mtime: 1, Ctime: 2, Ino: 3}, Blob: h}, {Path: "b/c", Blob: h}}, h))
	f.Add(encodeIndex(nil, Hash{}))
	f.Add([]byte(indexMagic + "\xff\xff\xff\xff"))
	f.Add([]byte(indexMagicV1 + "\x00\x00\x00\x00\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, rules, err := decodeIndex(data)
		// Version 1 is read, never written: only a version 2 index re-encodes to itself.
		if err == nil && bytes.HasPrefix(data, []byte(indexMagic)) && !bytes.Equal(encodeIndex(entries, rules), data) {
			t.Fatal("accepted an index that does not re-encode to itself")
		}
		// A capture reads the same entries in place (loadIndexLazy, cursor).
		body, _, lazyErr := checkIndex(data)
		if (lazyErr == nil) != (err == nil) {
			t.Fatalf("decodeIndex: %v; checkIndex: %v", err, lazyErr)
		}
		if err != nil {
			return
		}
		c := (&statIndex{body: &body}).cursor()
		for i := range entries {
			if e := c.entry(); e == nil || *e != entries[i] {
				t.Fatalf("entry %d read in place %+v, decoded %+v", i, e, entries[i])
			}
			c.advance()
		}
		if c.entry() != nil {
			t.Fatal("read in place more entries than decoded")
		}
	})
}

func FuzzDecodeCheckpoint(f *testing.F) {
	b, id := encodeCheckpoint(&Checkpoint{Time: time.Unix(1, 2), Kind: KindSafety, Label: "x\n\"y\"", Parent: "0123456789ab"})
	_ = id
	f.Add(b)
	f.Add([]byte(`{"format":1,"kind":"normal","parent":"zz"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		sum := sha256.Sum256(data)
		id := hex.EncodeToString(sum[:])[:IDLen] // the name such a file would have
		c, err := decodeCheckpoint(id, data)
		if err != nil {
			return
		}
		if c.ID != id || !validID(id) || (c.Kind != KindNormal && c.Kind != KindSafety) {
			t.Fatalf("accepted %+v", c)
		}
	})
}

func FuzzDecodePackIdx(f *testing.F) {
	h, _ := ParseHash(blobA)
	f.Add(objects.EncodePackIdx([]objects.PackEntry{{Hash: h, Off: 0, Size: 5}}), int64(5))
	f.Add(objects.EncodePackIdx(nil), int64(0))
	f.Fuzz(func(t *testing.T, data []byte, size int64) {
		entries, err := objects.DecodePackIdx(data, size)
		if err != nil {
			return
		}
		for _, e := range entries {
			if e.Off < 0 || e.Size < 0 || e.Off+e.Size > size {
				t.Fatalf("accepted an entry outside the pack: %+v", e)
			}
		}
	})
}

// FuzzExpandTree: a root tree and one subtree from outside (a damaged or hostile store) never
// panic the reader, and what it accepts passes the manifest checks and re-encodes to itself.
func FuzzExpandTree(f *testing.F) {
	h, _ := ParseHash(blobA)
	entries := []Entry{{Path: "a", Type: TypeDir, Mode: 0o755}, {Path: "a-b", Type: TypeFile, Size: 1, Blob: h}, {Path: "a/c", Type: TypeSymlink, Size: 1, Target: "x"}}
	tr := encodeTrees(len(entries), func(i int) *Entry { return &entries[i] }, nil)
	for _, sub := range tr.nodes {
		f.Add(tr.root, sub)
	}
	f.Add([]byte("rewind-tree 1 0\n"), []byte("rewind-tree 1 0\n"))
	f.Fuzz(func(t *testing.T, root, sub []byte) {
		sh := Hash(sha256.Sum256(sub))
		got, _, err := expandTree(root, func(x Hash) ([]byte, error) {
			if x != sh {
				return nil, ErrBadManifest
			}
			return sub, nil
		})
		if err != nil {
			return
		}
		if err := checkEntries(got); err != nil {
			t.Fatalf("accepted entries the manifest checks refuse: %v", err)
		}
		again := encodeTrees(len(got), func(i int) *Entry { return &got[i] }, nil)
		if !bytes.Equal(again.root, root) {
			t.Fatalf("accepted a root tree that does not re-encode to itself:\n%q\n%q", root, again.root)
		}
	})
}
