package objects

import (
	"path/filepath"
	"strings"

	"github.com/agent-rewind/rewind/snapshot/internal/platform"
)

// Leftovers lists what interrupted writes left in the object store, as names relative to the
// state directory: files staged in objects/tmp, temporary pack index files, and packs a write
// cut short (PackInterrupted). They are what CleanTmp and CleanPacks remove; check reports them
// (a pack without its index that may hold objects is not one: check's packs section reports it).
func (o *Store) Leftovers() ([]string, error) {
	var found []string
	names, err := platform.ReadDirNames(o.TmpDir())
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		found = append(found, filepath.Join("objects", "tmp", n))
	}
	names, err = platform.ReadDirNames(o.packDir)
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		if strings.HasPrefix(n, ".tmp-") {
			found = append(found, filepath.Join("packs", n))
		}
	}
	_, indexless := splitPacks(names)
	for _, id := range indexless {
		if o.Orphan(id).Kind == PackInterrupted {
			found = append(found, filepath.Join("packs", id+".pack"))
		}
	}
	return found, nil
}
