package snapshot

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"
)

func FuzzDecodeIndex(f *testing.F) {
	h, _ := ParseHash(blobA)
	f.Add(encodeIndex([]indexEntry{{Path: "a", St: statInfo{Mode: 0o100644, Size: 5, Mtime: 1, Ctime: 2, Ino: 3}, Blob: h}, {Path: "b/c", Blob: h}}))
	f.Add(encodeIndex(nil))
	f.Add([]byte(indexMagic + "\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := decodeIndex(data)
		if err == nil && !bytes.Equal(encodeIndex(entries), data) {
			t.Fatal("accepted an index that does not re-encode to itself")
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
	f.Add(encodePackIdx([]packEntry{{Hash: h, Off: 0, Size: 5}}), int64(5))
	f.Add(encodePackIdx(nil), int64(0))
	f.Fuzz(func(t *testing.T, data []byte, size int64) {
		entries, err := decodePackIdx(data, size)
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
