package tape

import (
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
)

// KeyEnv is the environment variable that holds the storage key: exactly 64 hexadecimal
// characters (32 random bytes), for example from `openssl rand -hex 32`. The key is never a
// command-line argument or a configuration field, so it does not leak into shell history,
// process listings or committed files.
const KeyEnv = "REWIND_STORAGE_KEY"

// KeySize is the length of a storage key in bytes.
const KeySize = 32

// KeyFromEnv reads the storage key from REWIND_STORAGE_KEY. It fails with ErrKeyMissing when the
// variable is unset or empty, and with ErrKeyMalformed when it is not exactly 64 hexadecimal
// characters. The error never contains the key.
func KeyFromEnv() ([]byte, error) {
	v, ok := os.LookupEnv(KeyEnv)
	if !ok || v == "" {
		return nil, fmt.Errorf("%w: set %s to 64 hexadecimal characters (32 random bytes, e.g. from `openssl rand -hex 32`) and keep it to reopen this tenant's store", ErrKeyMissing, KeyEnv)
	}
	return ParseKey(v)
}

// ParseKey decodes a storage key written as exactly 64 hexadecimal characters (either case).
func ParseKey(s string) ([]byte, error) {
	if len(s) != 2*KeySize {
		return nil, fmt.Errorf("%w: %s has %d characters; it must be exactly %d hexadecimal characters (32 bytes)", ErrKeyMalformed, KeyEnv, len(s), 2*KeySize)
	}
	k, err := hex.DecodeString(s)
	if err != nil {
		// hex's error quotes the offending character; the value is a secret, so say less.
		return nil, fmt.Errorf("%w: %s has a character that is not hexadecimal; it must be exactly %d characters from 0-9 a-f A-F", ErrKeyMalformed, KeyEnv, 2*KeySize)
	}
	return k, nil
}

// keys are the subkeys derived from the storage key. Each use gets its own key (HKDF-Expand with
// SHA-256, RFC 5869; the storage key is already uniformly random, so it serves as the
// pseudorandom key and Extract is skipped), so that no value is ever computed under two purposes.
type keys struct {
	aead  [32]byte // AES-256-GCM key for every sealed value
	mac   [32]byte // HMAC-SHA256 key for request tags and cursor rows
	keyID [16]byte // public identifier of the storage key, stored in the meta row
}

// HKDF info strings: part of the on-disk format (see doc.go).
const (
	infoAEAD  = "agent-rewind/tape aead v1"
	infoMAC   = "agent-rewind/tape mac v1"
	infoKeyID = "agent-rewind/tape key-id v1"
)

func deriveKeys(key []byte) (*keys, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("%w: the key is %d bytes; it must be exactly %d bytes (64 hexadecimal characters in %s)", ErrKeyMalformed, len(key), KeySize, KeyEnv)
	}
	var k keys
	for _, d := range []struct {
		dst  []byte
		info string
	}{{k.aead[:], infoAEAD}, {k.mac[:], infoMAC}, {k.keyID[:], infoKeyID}} {
		b, err := hkdf.Expand(sha256.New, key, d.info, len(d.dst))
		if err != nil {
			return nil, fmt.Errorf("tape: derive %s: %w", d.info, err)
		}
		copy(d.dst, b)
	}
	return &k, nil
}
