package snapshot

import (
	"io"
)

// OpenContent opens the stored content h (an Entry's Blob) for reading; the reader fails with
// ErrCorrupt when the bytes do not hash to h by the end. The web UI's line diff reads through it.
func (s *Store) OpenContent(h Hash) (io.ReadCloser, error) {
	return s.objects.Open(h)
}
