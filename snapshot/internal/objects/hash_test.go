package objects

import (
	"encoding/hex"
	"testing"
)

// The decoding table agrees with encoding/hex on every byte, and refuses upper case.
func TestParseHashEveryByte(t *testing.T) {
	base := []byte("3f2a9c01b2de3f2a9c01b2de3f2a9c01b2de3f2a9c01b2de3f2a9c01b2de3f2a")
	for c := range 256 {
		for _, at := range []int{0, 1, 63} {
			s := append([]byte(nil), base...)
			s[at] = byte(c)
			h, err := ParseHash(string(s))
			want, werr := hex.DecodeString(string(s))
			valid := werr == nil && ('0' <= c && c <= '9' || 'a' <= c && c <= 'f')
			if valid != (err == nil) {
				t.Fatalf("byte %#x at %d: err %v, valid %v", c, at, err, valid)
			}
			if valid && string(h[:]) != string(want) {
				t.Fatalf("byte %#x at %d: decoded %x, want %x", c, at, h, want)
			}
		}
	}
}
