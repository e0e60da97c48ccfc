package upkeep

import (
	"cmp"
	"errors"
	"io/fs"
	"os"
	"slices"

	"github.com/agent-rewind/rewind/snapshot/internal/objects"
)

// PackFile is a pack, by id, and its size.
type PackFile struct {
	ID   string
	Size int64
}

// SmallPacks lists the packs smaller than MergeBelow, smallest first (by their files' sizes:
// no index is read).
func SmallPacks(o *objects.Store) ([]PackFile, error) {
	ids, err := o.PackIDs()
	if err != nil {
		return nil, err
	}
	var out []PackFile
	for _, id := range ids {
		fi, err := os.Lstat(o.PackPath(id))
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed since the listing (by a gc), or damaged: check and gc say which
		}
		if err != nil {
			return nil, err
		}
		if fi.Mode().IsRegular() && fi.Size() < MergeBelow {
			out = append(out, PackFile{id, fi.Size()})
		}
	}
	slices.SortFunc(out, func(a, b PackFile) int { return cmp.Compare(a.Size, b.Size) })
	return out, nil
}

// MergeBatch returns the next batch of small packs for maintenance to merge, every object of
// each kept (no checkpoint is read): the smallest ones, as many as maxPacks and MergeBelow
// bytes allow, and at least two. It bounds what one hold of the writers' lock copies: at most
// maxPacks packs and MergeBelow bytes, or two packs. Fewer than two small packs: none.
func MergeBatch(o *objects.Store, maxPacks int) ([]Source, error) {
	small, err := SmallPacks(o)
	if err != nil {
		return nil, err
	}
	var batch []Source
	var size int64
	for _, p := range small {
		if len(batch) >= maxPacks || (len(batch) >= 2 && size+p.Size > MergeBelow) {
			break
		}
		entries, err := o.ReadPackIdx(p.ID)
		if err != nil {
			return nil, err
		}
		batch = append(batch, Source{ID: p.ID, Live: entries})
		size += p.Size
	}
	if len(batch) < 2 {
		return nil, nil
	}
	return batch, nil
}
