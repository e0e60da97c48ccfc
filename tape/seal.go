package tape

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
)

// Kinds of sealed values, bound into the additional data so that a request can never be opened
// as a response, nor the key check as either.
const (
	kindRequest  byte = 1
	kindResponse byte = 2
	kindKeyCheck byte = 3
	kindReplay   byte = 4
)

// adPrefix starts every AEAD additional data and names its layout version.
const adPrefix = "agent-rewind/tape v1\x00"

// keyCheckPlaintext is the known value sealed in the meta row; opening it proves the key.
const keyCheckPlaintext = "agent-rewind/tape key check v1"

// nonceSize is AES-GCM's standard 96-bit nonce. Nonces are random: at the tape's write rates a
// collision needs far more than 2^32 seals under one key, which NIST SP 800-38D allows.
const nonceSize = 12

// sealer seals and opens values for one tenant under one storage key.
type sealer struct {
	aead   cipher.AEAD
	mac    []byte
	keyID  []byte
	tenant string
}

func newSealer(k *keys, tenant string) (*sealer, error) {
	block, err := aes.NewCipher(k.aead[:])
	if err != nil {
		return nil, fmt.Errorf("tape: AES key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("tape: AES-GCM: %w", err)
	}
	return &sealer{aead: aead, mac: k.mac[:], keyID: k.keyID[:], tenant: tenant}, nil
}

// ad is the additional data of one sealed value:
//
//	"agent-rewind/tape v1" 0x00 | str(tenant) | str(epoch) | u64(position) | u8(kind) | tag
//
// where str(s) is a big-endian u32 length and the bytes of s, u64 is big-endian, and tag (only
// for responses) is the 32-byte request tag of the record, so a response is bound to the request
// it answered.
func (s *sealer) ad(epoch string, position int64, kind byte, tag []byte) []byte {
	b := make([]byte, 0, len(adPrefix)+8+len(s.tenant)+len(epoch)+9+len(tag))
	b = append(b, adPrefix...)
	b = appendStr(b, s.tenant)
	b = appendStr(b, epoch)
	b = binary.BigEndian.AppendUint64(b, uint64(position))
	b = append(b, kind)
	return append(b, tag...)
}

// seal returns nonce | ciphertext | GCM tag.
func (s *sealer) seal(plaintext, ad []byte) []byte {
	out := make([]byte, nonceSize, nonceSize+len(plaintext)+s.aead.Overhead())
	rand.Read(out[:nonceSize]) // crypto/rand.Read never fails (it crashes the program instead)
	return s.aead.Seal(out, out[:nonceSize], plaintext, ad)
}

// open reverses seal. A false ok means the value, or anything bound to it, was altered.
func (s *sealer) open(blob, ad []byte) (plaintext []byte, ok bool) {
	if len(blob) < nonceSize+s.aead.Overhead() {
		return nil, false
	}
	p, err := s.aead.Open(nil, blob[:nonceSize], blob[nonceSize:], ad)
	return p, err == nil
}

// requestTag is HMAC-SHA256(mac key, "request-tag" 0x00 | hash). The database stores the tag,
// not the hash, so that a reader without the key cannot confirm a guess of a recorded request.
func (s *sealer) requestTag(h Hash) []byte {
	m := hmac.New(sha256.New, s.mac)
	m.Write([]byte("request-tag\x00"))
	m.Write(h[:])
	return m.Sum(nil)
}

// cursorMAC authenticates a cursor row: HMAC-SHA256(mac key, "cursor" 0x00 | str(tenant) |
// str(epoch) | str(cursor) | u64(position)).
func (s *sealer) cursorMAC(epoch, cursor string, position int64) []byte {
	b := append([]byte("cursor\x00"), nil...)
	b = appendStr(b, s.tenant)
	b = appendStr(b, epoch)
	b = appendStr(b, cursor)
	b = binary.BigEndian.AppendUint64(b, uint64(position))
	m := hmac.New(sha256.New, s.mac)
	m.Write(b)
	return m.Sum(nil)
}

// requestIDMAC authenticates a request-id row: HMAC-SHA256(mac key, "request-id" 0x00 |
// str(tenant) | str(epoch) | str(cursor) | str(request id) | u64(position)).
func (s *sealer) requestIDMAC(epoch, cursor, id string, position int64) []byte {
	b := append([]byte("request-id\x00"), nil...)
	b = appendStr(b, s.tenant)
	b = appendStr(b, epoch)
	b = appendStr(b, cursor)
	b = appendStr(b, id)
	b = binary.BigEndian.AppendUint64(b, uint64(position))
	m := hmac.New(sha256.New, s.mac)
	m.Write(b)
	return m.Sum(nil)
}

// keyCheck seals the known value for the meta row.
func (s *sealer) keyCheck() []byte {
	return s.seal([]byte(keyCheckPlaintext), s.ad("", 0, kindKeyCheck, nil))
}

// checkKey reports whether blob is the known value sealed under this key for this tenant.
func (s *sealer) checkKey(blob []byte) bool {
	p, ok := s.open(blob, s.ad("", 0, kindKeyCheck, nil))
	return ok && string(p) == keyCheckPlaintext
}

// appendStr appends a big-endian u32 length and the bytes of s.
func appendStr[T string | []byte](b []byte, s T) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}
