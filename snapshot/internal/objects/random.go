package objects

import (
	"crypto/rand"
	"encoding/hex"
)

// RandomHex returns n random bytes as hex, for temporary names and operation ids.
func RandomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
