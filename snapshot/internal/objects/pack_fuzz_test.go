package objects

import "testing"

// FuzzDecodePackIdx: a pack index is accepted only with every entry inside its pack.
func FuzzDecodePackIdx(f *testing.F) {
	h, _ := ParseHash("2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824")
	f.Add(encodePackIdx([]PackEntry{{Hash: h, Off: 0, Size: 5}}), int64(5))
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
