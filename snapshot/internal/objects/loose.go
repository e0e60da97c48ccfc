package objects

import (
	"path/filepath"

	"github.com/agent-rewind/rewind/snapshot/internal/platform"
)

// Loose calls fn with the hash and file name of every loose object (objects/ab/cdef…), fan-out
// folder by folder; files whose names are not hashes, and objects/tmp, are not objects and are
// skipped. An error fn returns stops the listing and is returned.
func (o *Store) Loose(fn func(h Hash, name string) error) error {
	fans, err := platform.ReadDirNames(o.dir)
	if err != nil {
		return err
	}
	for _, fan := range fans {
		if len(fan) != 2 || !IsLowerHex(fan) {
			continue // tmp/
		}
		dir := filepath.Join(o.dir, fan)
		names, err := platform.ReadDirNames(dir)
		if err != nil {
			return err
		}
		for _, n := range names {
			h, err := ParseHash(fan + n)
			if err != nil {
				continue
			}
			if err := fn(h, filepath.Join(dir, n)); err != nil {
				return err
			}
		}
	}
	return nil
}
