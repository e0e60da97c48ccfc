package snapshot

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// Hash is a SHA-256 digest: the name of an object (file content) or of a manifest.
type Hash [sha256.Size]byte

// String returns the lowercase hex form used in file names, manifests and JSON.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// IsZero reports whether h is the zero value (no content).
func (h Hash) IsZero() bool { return h == Hash{} }

// MarshalText encodes h as lowercase hex.
func (h Hash) MarshalText() ([]byte, error) { return []byte(h.String()), nil }

// UnmarshalText decodes 64 lowercase hex digits.
func (h *Hash) UnmarshalText(b []byte) error {
	v, err := ParseHash(string(b))
	if err != nil {
		return err
	}
	*h = v
	return nil
}

// ParseHash decodes 64 lowercase hex digits.
func ParseHash(s string) (Hash, error) {
	var h Hash
	if len(s) != 2*len(h) || !isLowerHex(s) {
		return h, fmt.Errorf("%q is not a sha256 (64 lowercase hex digits)", s)
	}
	hex.Decode(h[:], []byte(s))
	return h, nil
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func sha256Sum(b []byte) [32]byte { return sha256.Sum256(b) }
