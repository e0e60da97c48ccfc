package check

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/agent-rewind/rewind/internal/regular"
	"github.com/agent-rewind/rewind/snapshot/internal/objects"
)

// packs reads every pack index and returns where each packed content is, from the readable ones
// (and from the trailer of a pack whose index file is missing: the next writer rebuilds it).
// rebuilt are the problems rebuildPacks repaired.
func (c *checker) packs(rebuilt []Problem) map[Hash]location {
	sec := c.section("packs")
	sec.Problems = append(sec.Problems, rebuilt...)
	sec.Checked += len(rebuilt)
	out := map[Hash]location{}
	c.indexless(sec, out)
	ids, err := c.Objects.PackIDs()
	if err != nil {
		sec.Problems = append(sec.Problems, Problem{Kind: "packs-unreadable", Where: "packs/", What: err.Error(),
			Fix: "make the state directory readable by this user"})
		return out
	}
	slices.Sort(ids)
	for _, id := range ids {
		sec.Checked++
		entries, err := c.Objects.ReadPackIdx(id)
		if err != nil {
			what := err.Error()
			var ce *objects.CorruptError
			if errors.As(err, &ce) {
				what = ce.Reason
			}
			sec.Problems = append(sec.Problems, Problem{Kind: "pack-corrupt", Where: "packs/" + id + ".idx", What: what,
				Fix: "restore packs/" + id + ".pack and .idx from a backup of the state directory; the contents it held are reported missing below"})
			continue
		}
		pack := c.Objects.PackPath(id)
		for _, e := range entries {
			if _, dup := out[e.Hash]; !dup {
				out[e.Hash] = location{pack: pack, PackEntry: e}
			}
		}
	}
	return out
}

// contents checks that every needed content is stored with its size, and with ReadData that it
// hashes to its name.
func (c *checker) contents(ctx context.Context, needs map[Hash]*need, packed map[Hash]location) error {
	sec := c.section("objects")
	hashes := make([]Hash, 0, len(needs))
	for h := range needs {
		hashes = append(hashes, h)
	}
	slices.SortFunc(hashes, func(a, b Hash) int { return strings.Compare(string(a[:]), string(b[:])) })
	for _, h := range hashes {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := needs[h]
		sec.Checked++
		loose := c.Objects.Path(h)
		where := c.rel(loose)
		problem := func(kind, what, fix string) {
			sec.Problems = append(sec.Problems, Problem{Kind: kind, Where: where, Path: n.path, What: what, Fix: fix, Checkpoints: n.checkpoints})
			if kind != "object-unreadable" {
				c.bad[h] = badObject{sec, len(sec.Problems) - 1}
			}
		}
		const restore = "if a file in the workspace still has this content, check --repair stores it again from there; " +
			"otherwise restore it from a backup of the state directory: until then the checkpoints listed cannot restore this file"
		var size int64
		var open func() (io.ReadCloser, error)
		if fi, err := os.Lstat(loose); err == nil {
			size = fi.Size()
			open = func() (io.ReadCloser, error) { return regular.Open(loose) }
		} else if loc, ok := packed[h]; ok {
			where = fmt.Sprintf("%s (offset %d)", c.rel(loc.pack), loc.Off)
			size = loc.Size
			open = func() (io.ReadCloser, error) {
				f, err := regular.Open(loc.pack)
				if err != nil {
					return nil, err
				}
				return objects.SectionCloser{SectionReader: io.NewSectionReader(f, loc.Off, loc.Size), File: f}, nil
			}
		} else if list := c.Objects.ListPath(h); c.Objects.HasList(h) {
			where = c.rel(list)
			if kind, at, what := c.chunked(h, n.size, packed); kind != "" {
				if at != "" {
					where = at
				}
				problem(kind, fmt.Sprintf("content %s of %q: %s", h, n.path, what), restore)
			}
			continue
		} else {
			problem("object-missing", fmt.Sprintf("content %s of %q is stored neither loose, nor in a pack, nor in chunks", h, n.path), restore)
			continue
		}
		if size != n.size {
			problem("object-corrupt", fmt.Sprintf("stored content is %d bytes, the manifest says %d", size, n.size), restore)
			continue
		}
		if !c.Options.ReadData {
			continue
		}
		got, err := hashReader(open)
		if err != nil {
			problem("object-unreadable", err.Error(), "make it readable")
			continue
		}
		if got != h {
			problem("object-corrupt", fmt.Sprintf("stored content hashes to %s, not to its name", got), restore)
		}
	}
	return nil
}

func hashReader(open func() (io.ReadCloser, error)) (Hash, error) {
	var h Hash
	r, err := open()
	if err != nil {
		return h, err
	}
	defer r.Close()
	hasher := sha256.New()
	if _, err := io.Copy(hasher, r); err != nil {
		return h, err
	}
	hasher.Sum(h[:0])
	return h, nil
}
