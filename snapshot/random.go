package snapshot

import (
	"crypto/rand"
	"encoding/hex"
)

// randomHex returns n random bytes as hex, for temporary names and operation ids.
func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
