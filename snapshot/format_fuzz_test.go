package snapshot

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"
)

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
