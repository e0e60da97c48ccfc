package objects

import (
	"bytes"
	"crypto/sha256"
	"testing"
)

// FuzzOrphanPack: any bytes in a pack without its index file are classified without a panic,
// and a trailer is accepted only with an index whose every entry lies before it.
func FuzzOrphanPack(f *testing.F) {
	idx := encodePackIdx([]PackEntry{{Hash: Hash(sha256.Sum256([]byte("abc"))), Off: 8, Size: 3}})
	f.Add(appendPackTrailer([]byte(PackMagic+"abc"), idx))
	f.Add([]byte(PackMagic))
	f.Add([]byte(PackMagic[:3]))
	f.Add([]byte("objects of an older version"))
	f.Add(appendPackTrailer([]byte(PackMagic), idx)) // an entry past the objects
	f.Fuzz(func(t *testing.T, data []byte) {
		op := classifyPack(bytes.NewReader(data), int64(len(data)))
		if op.Kind != PackTrailed {
			return
		}
		end := int64(len(data) - PackTrailerSize - len(op.Idx))
		for _, e := range op.Entries {
			if e.Off < 0 || e.Size < 0 || e.Off+e.Size > end {
				t.Fatalf("entry %+v outside the objects (%d bytes)", e, end)
			}
		}
	})
}
