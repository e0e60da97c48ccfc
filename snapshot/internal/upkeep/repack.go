package upkeep

import (
	"fmt"

	"github.com/agent-rewind/rewind/internal/regular"
	"github.com/agent-rewind/rewind/snapshot/internal/objects"
)

// MergeBelow is the size under which a pack is small: every checkpoint that stores something
// adds a pack (its trees, its small contents), and every process reads every pack index, so GC
// and maintenance rewrite the small ones as one. Large packs (a first checkpoint's) stay as
// they are, so one GC copies at most MergeBelow bytes per small pack it finds.
const MergeBelow = 16 << 20

// Source is a pack, by id, and the objects to keep from it when it is rewritten.
type Source struct {
	ID   string
	Live []objects.PackEntry
}

// SweepPacks drops the objects keep does not name from packs and merges the small ones: a pack
// with no needed object is removed; the small packs (MergeBelow), when there are two or more or
// one has unneeded objects, are rewritten together as one pack of the objects needed; a large
// pack with unneeded objects is rewritten alone. A new pack's index is durable before an old
// index goes, so a crash leaves an object in two packs, never in none. It adds to res what it
// removed (in a dry run, what it would).
func SweepPacks(o *objects.Store, keep map[Hash]bool, res *Swept, dryRun bool) error {
	ids, err := o.PackIDs()
	if err != nil {
		return err
	}
	var small []Source // the small packs, with the objects needed from each
	var smallDead bool
	for _, id := range ids {
		entries, err := o.ReadPackIdx(id)
		if err != nil {
			return fmt.Errorf("gc: %w", err)
		}
		src := Source{ID: id}
		var size int64
		for _, e := range entries {
			if keep[e.Hash] {
				src.Live = append(src.Live, e)
				size += e.Size
			} else {
				res.Objects++
				res.Bytes += e.Size
			}
		}
		dead := len(src.Live) < len(entries)
		switch {
		case len(src.Live) == 0:
			if !dryRun {
				if err := o.RemovePacks([]string{id}); err != nil {
					return fmt.Errorf("gc: %w", err)
				}
			}
		case size < MergeBelow:
			small = append(small, src)
			smallDead = smallDead || dead
		case dead && !dryRun:
			if err := Repack(o, []Source{src}); err != nil {
				return fmt.Errorf("gc: repack %s: %w", o.PackPath(id), err)
			}
		}
	}
	if len(small) < 2 && !smallDead {
		return nil
	}
	if len(small) > 1 {
		res.PacksMerged = len(small)
	}
	if dryRun {
		return nil
	}
	if err := Repack(o, small); err != nil {
		return fmt.Errorf("gc: merge %d small packs: %w", len(small), err)
	}
	return nil
}

// Repack copies the needed objects of the packs srcs into one new pack, verifying each as it is
// copied, then removes srcs (RemovePacks: their indexes first). An object in two of them is
// copied once.
func Repack(o *objects.Store, srcs []Source) error {
	p, err := o.NewPack()
	if err != nil {
		return err
	}
	copied := map[Hash]bool{}
	for _, src := range srcs {
		if err := copyLive(p, o.PackPath(src.ID), src.Live, copied); err != nil {
			p.Abort()
			return err
		}
	}
	if err := o.FinishPack(p); err != nil {
		p.Abort()
		return err
	}
	o.Forget()
	ids := make([]string, len(srcs))
	for i, src := range srcs {
		ids[i] = src.ID
	}
	return o.RemovePacks(ids)
}

// copyLive appends the objects live of the pack file pack to p, verifying each against its hash.
func copyLive(p *objects.PackWriter, pack string, live []objects.PackEntry, copied map[Hash]bool) error {
	f, err := regular.Open(pack)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, e := range live {
		if copied[e.Hash] {
			continue
		}
		data := make([]byte, e.Size)
		if _, err := f.ReadAt(data, e.Off); err != nil {
			return err
		}
		if objects.Sum(data) != e.Hash {
			return &objects.CorruptError{Path: pack, Reason: fmt.Sprintf("object %s at offset %d does not match its hash", e.Hash, e.Off)}
		}
		if err := p.Add(e.Hash, data); err != nil {
			return err
		}
		copied[e.Hash] = true
	}
	return nil
}
