package check

import (
	"fmt"
	"path/filepath"

	"github.com/agent-rewind/rewind/snapshot/internal/objects"
)

// What check says and does about packs whose index file is missing (FORMAT.md, "Packs" and
// "Check"): the pack's objects exist, but no reader finds them until the index is back.

// indexless reports the packs still without an index file in sec (an interrupted write's pack
// is the leftovers section's), and adds the objects a pack's trailer places to packed: readers
// find them there too (objects' loadPacks), until the next writer writes the index file back.
func (c *checker) indexless(sec *Section, packed map[Hash]location) {
	ids, err := c.Objects.IndexlessPacks()
	if err != nil {
		return // packs-unreadable is reported by the listing of the indexes
	}
	for _, id := range ids {
		where := "packs/" + id + ".pack"
		switch op := c.Objects.Orphan(id); op.Kind {
		case objects.PackTrailed:
			sec.Checked++
			pack := c.Objects.PackPath(id)
			for _, e := range op.Entries {
				if _, dup := packed[e.Hash]; !dup {
					packed[e.Hash] = location{pack: pack, PackEntry: e}
				}
			}
			sec.Problems = append(sec.Problems, Problem{Kind: "pack-index-missing", Where: where, Benign: true,
				What: fmt.Sprintf("its index file is missing (a crash before its rename, or a file lost); its %d objects are read through the copy of the index at the pack's end", len(op.Entries)),
				Fix:  "the next checkpoint, rewind or gc writes the index file back; check --repair does it now"})
		case objects.PackLegacy:
			sec.Checked++
			sec.Problems = append(sec.Problems, Problem{Kind: "pack-index-missing", Where: where,
				What: "its index file is missing, and the pack was written before packs carried a copy of their index: no reader finds its objects, which are reported missing below",
				Fix:  "run check --repair: it finds in the pack the objects the checkpoints, chunk lists and stat cache name, and writes its index again"})
		case objects.PackUnreadable:
			sec.Checked++
			sec.Problems = append(sec.Problems, Problem{Kind: "pack-corrupt", Where: where, What: "it has no index file and cannot be read: " + op.Why,
				Fix: "make it readable by this user and run check --repair, or restore packs/" + id + ".pack and .idx from a backup of the state directory"})
		}
	}
}

// rebuildPacks gives every pack whose index file is missing its index back, before anything
// reads the packs: from its trailer, or, for a pack written before packs had one, from the pack
// and what the store names (salvagePack); a legacy pack in which nothing the store names is
// found goes to quarantine. It returns the problems it repaired.
func (c *checker) rebuildPacks(cps []Checkpoint) ([]Problem, error) {
	ids, err := c.Objects.IndexlessPacks()
	if err != nil {
		return nil, err
	}
	var out []Problem
	var legacy []string
	for _, id := range ids {
		switch op := c.Objects.Orphan(id); op.Kind {
		case objects.PackTrailed:
			if err := c.Objects.WriteIdxBytes(id, op.Idx); err != nil {
				return nil, fmt.Errorf("rebuild the index of packs/%s.pack: %w", id, err)
			}
			out = append(out, Problem{Kind: "pack-index-missing", Where: "packs/" + id + ".pack", Repaired: true, Benign: true,
				What: "its index file was missing; written back from the copy at the end of the pack", Fix: "none: done"})
		case objects.PackLegacy:
			legacy = append(legacy, id)
		}
	}
	if len(legacy) == 0 {
		return out, nil
	}
	// The trees first: a manifest whose trees were in these packs then reads, and names the
	// contents the second pass looks for.
	for _, id := range legacy {
		sv, err := salvagePack(c.Objects.PackPath(id), nil, true)
		if err != nil {
			return nil, err
		}
		if len(sv.entries) > 0 {
			if err := c.Objects.WritePackIdx(id, sv.entries); err != nil {
				return nil, err
			}
		}
	}
	c.Objects.Forget()
	want := c.wantedContents(cps)
	for _, id := range legacy {
		rel := "packs/" + id + ".pack"
		sv, err := salvagePack(c.Objects.PackPath(id), want, false)
		if err != nil {
			return nil, err
		}
		p := Problem{Kind: "pack-index-missing", Where: rel, Repaired: true, Fix: "none: done"}
		if len(sv.entries) == 0 {
			if err := c.moveAside(filepath.Join("packs", id+".pack")); err != nil {
				return nil, err
			}
			p.What = "its index file was missing, and nothing the store names was found in it (a pack written before packs carried a copy of their index); moved aside to quarantine/"
			out = append(out, p)
			continue
		}
		if err := c.Objects.WritePackIdx(id, sv.entries); err != nil {
			return nil, err
		}
		p.What = fmt.Sprintf("its index file was missing (the pack was written before packs carried a copy of it); rebuilt from the pack and what the store names: %d objects (%d of them trees) in %d of its %d bytes", len(sv.entries), sv.trees, sv.placed, sv.size)
		if sv.placed < sv.size {
			p.What += "; the rest is left unindexed: nothing the store names was found there"
		}
		out = append(out, p)
	}
	c.Objects.Forget()
	return out, nil
}
