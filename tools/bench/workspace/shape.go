package workspace

import (
	"errors"
	"fmt"
)

// Shape is the generator's parameters: everything the generated tree depends on.
type Shape struct {
	Files int    `json:"files"` // regular files plus symlinks
	Bytes int64  `json:"bytes"` // total size of the regular files' contents
	Seed  uint64 `json:"seed"`
}

// BytesPerFile is the default average: 50,000 files make the snapshot issue's ~1.4 GB.
const BytesPerFile = 28_000

// Full is the snapshot issue's workspace: 50,000 files, about 1.4 GB.
var Full = Shape{Files: 50_000, Bytes: 50_000 * BytesPerFile, Seed: 1}

// Quick is the smaller tree used by "bench --quick": 5,000 files, 100 MiB.
var Quick = Shape{Files: 5_000, Bytes: 100 << 20, Seed: 1}

// ErrShape reports parameters the generator cannot honour.
var ErrShape = errors.New("workspace: bad shape")

// Validate reports whether s can be generated: at least 10 files, and at least 64 bytes of
// content per regular file.
func (s Shape) Validate() error {
	if s.Files < 10 {
		return fmt.Errorf("%w: %d files: need at least 10", ErrShape, s.Files)
	}
	if s.Files > 10_000_000 {
		return fmt.Errorf("%w: %d files: at most 10,000,000", ErrShape, s.Files)
	}
	if s.Bytes < int64(s.Files)*64 {
		return fmt.Errorf("%w: %d bytes for %d files: need at least 64 bytes a file (%d)", ErrShape, s.Bytes, s.Files, int64(s.Files)*64)
	}
	return nil
}
