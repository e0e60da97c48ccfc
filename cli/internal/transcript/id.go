package transcript

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"time"
)

// newUUIDv4 is a random UUID, the form of Claude Code's session ids.
func newUUIDv4() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return format(b)
}

// newUUIDv7 is a time-ordered UUID (RFC 9562), the form of Codex's session ids.
func newUUIDv7(t time.Time) string {
	var b [16]byte
	rand.Read(b[:])
	var ms [8]byte
	binary.BigEndian.PutUint64(ms[:], uint64(t.UnixMilli()))
	copy(b[:6], ms[2:])
	b[6] = b[6]&0x0f | 0x70
	b[8] = b[8]&0x3f | 0x80
	return format(b)
}

func format(b [16]byte) string {
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
