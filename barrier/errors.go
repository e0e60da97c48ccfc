package barrier

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// Sentinel errors, matchable with errors.Is. The errors returned wrap them with the value that
// was wrong and what to do about it.
var (
	// ErrInvalidKey reports an effect key that is empty, too long, not UTF-8, or holds control
	// characters.
	ErrInvalidKey = errors.New("invalid effect key")
	// ErrUnknownKey reports a key the ledger has never admitted.
	ErrUnknownKey = errors.New("no such effect key in the ledger")
	// ErrReasonRequired reports a release without a reason: releases are audited.
	ErrReasonRequired = errors.New("a reason is required")
	// ErrNotRecorded reports that the Recorder failed, so an admission, transition or refusal is
	// not on the chain. An admission that cannot be recorded is undone and must be refused.
	ErrNotRecorded = errors.New("could not record on the chain")
	// ErrCorruptLedger reports a ledger file that cannot be read as this format describes.
	ErrCorruptLedger = errors.New("effect ledger is damaged")
	// ErrNewerFormat reports a ledger record written by a newer agent-rewind.
	ErrNewerFormat = errors.New("effect ledger record is from a newer agent-rewind")
	// ErrNoRecorder reports a Ledger opened without a Recorder: every decision must be recorded.
	ErrNoRecorder = errors.New("no Recorder given")
)

// MaxKeyLen is the longest effect key accepted, in bytes.
const MaxKeyLen = 512

// validateKey checks the rules of ErrInvalidKey.
func validateKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: the key is empty (give every effect a stable, non-empty key such as \"invoice-2024-17-email\")", ErrInvalidKey)
	}
	if len(key) > MaxKeyLen {
		return fmt.Errorf("%w: the key is %d bytes, more than %d (use a shorter stable name, or a hash of the long one)", ErrInvalidKey, len(key), MaxKeyLen)
	}
	if !utf8.ValidString(key) {
		return fmt.Errorf("%w: %q is not valid UTF-8", ErrInvalidKey, key)
	}
	for _, r := range key {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return fmt.Errorf("%w: %q holds the control character %U (use printable characters only)", ErrInvalidKey, key, r)
		}
	}
	return nil
}
