package hashchain

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/agent-rewind/rewind/internal/durable"
)

// ErrNothingToRecover is returned by Recover for a chain that does not end in a torn line.
var ErrNothingToRecover = errors.New("the chain does not end in a torn line: nothing to recover")

// Recovery describes what Recover moved aside and the entry that records it.
type Recovery struct {
	SavedAs string `json:"savedAs"` // the file now holding the torn bytes
	Offset  int64  `json:"offset"`  // where they began in the chain
	Bytes   int64  `json:"bytes"`   // how many
	SHA256  string `json:"sha256"`  // their hex SHA-256
	Entry   Entry  `json:"entry"`   // the "recover" entry appended
}

// RecoverKind is the kind of the entry Recover appends.
const RecoverKind = "recover"

// Recover is the person-initiated repair of a torn chain (FORMAT.md §8): it moves the torn
// bytes at the end of the chain into a new file beside it (durably, before cutting them), cuts
// them from the chain, and appends a "recover" entry saying what was cut. The torn bytes were
// never acknowledged to any caller: Append returns only after fsync.
func Recover(path string, opts Options) (Recovery, error) {
	c, err := openFiles(path, opts)
	if err != nil {
		return Recovery{}, err
	}
	defer c.Close()
	var rec Recovery
	err = c.withLock(func() error {
		st, err := c.f.Stat()
		if err != nil {
			return fmt.Errorf("stat chain: %w", err)
		}
		_, _, err = c.readTail(st.Size())
		var torn *TornError
		if !errors.As(err, &torn) {
			if err == nil {
				return ErrNothingToRecover
			}
			return err
		}
		data := make([]byte, torn.Bytes)
		if _, err := c.f.ReadAt(data, torn.Offset); err != nil {
			return fmt.Errorf("read torn bytes: %w", err)
		}
		sum := sha256.Sum256(data)
		now := time.Now
		if opts.Clock != nil {
			now = opts.Clock
		}
		saved := tornPath(c.path, now())
		if err := durable.WriteFile(saved, data, 0o600); err != nil {
			return fmt.Errorf("save torn bytes to %s (the chain is unchanged): %w", saved, err)
		}
		if err := c.f.Truncate(torn.Offset); err != nil {
			return fmt.Errorf("cut torn bytes from the chain (they are saved in %s): %w", saved, err)
		}
		if err := c.f.Sync(); err != nil {
			return fmt.Errorf("sync chain: %w", err)
		}
		if err := c.sync(true); err != nil {
			return err
		}
		rec = Recovery{SavedAs: saved, Offset: torn.Offset, Bytes: torn.Bytes, SHA256: hex.EncodeToString(sum[:])}
		canon, err := canonicalData(map[string]any{
			"offset": torn.Offset, "torn_bytes": torn.Bytes, "torn_sha256": rec.SHA256, "saved_as": filepath.Base(saved),
		})
		if err != nil {
			return err
		}
		rec.Entry, err = c.appendLocked(RecoverKind, canon)
		return err
	})
	return rec, err
}
