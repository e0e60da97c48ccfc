package workspacetest

import (
	"encoding/binary"
	"math/rand/v2"
)

// RandomBytes returns n pseudo-random bytes of the given seed: the same bytes for a seed in
// every package's tests (the chunker's and the store's agree on where a seed's content is cut).
func RandomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, n+8)
	for i := 0; i < n; i += 8 {
		binary.LittleEndian.PutUint64(b[i:], r.Uint64())
	}
	return b[:n]
}
