package check

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
	"github.com/agent-rewind/rewind/snapshot/internal/objects"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
)

// need is a content some checkpoints' manifests name.
type need struct {
	size        int64
	path        string   // one path that has it
	checkpoints []string // the checkpoints that need it
}

// checkpoints reads every checkpoint's metadata; the readable ones are returned.
func (c *checker) checkpoints() []Checkpoint {
	sec := c.section("checkpoints")
	names, err := platform.ReadDirNames(filepath.Join(c.StateDir, "checkpoints"))
	if err != nil {
		sec.Problems = append(sec.Problems, Problem{Kind: "checkpoints-unreadable", Where: "checkpoints/", What: err.Error(),
			Fix: "make the state directory readable by this user"})
		return nil
	}
	slices.Sort(names)
	var out []Checkpoint
	for _, n := range names {
		cp, isID, err := c.Store.Checkpoint(n)
		if !isID {
			continue // temporary files are leftovers
		}
		sec.Checked++
		if err != nil {
			var ce *objects.CorruptError
			what := err.Error()
			if errors.As(err, &ce) {
				what = ce.Reason
			}
			sec.Problems = append(sec.Problems, Problem{Kind: "checkpoint-corrupt", Where: "checkpoints/" + n, What: what,
				Fix:         "restore this file from a backup of the state directory; until then list, gc and rewinds to it fail (move it out of checkpoints/ to go on without it)",
				Checkpoints: []string{n}})
			continue
		}
		out = append(out, cp)
	}
	return out
}

// manifests reads the manifest of every readable checkpoint and returns the contents they need.
func (c *checker) manifests(cps []Checkpoint) map[Hash]*need {
	sec := c.section("manifests")
	users := map[Hash][]string{}
	var order []Hash
	for _, cp := range cps {
		if users[cp.Manifest] == nil {
			order = append(order, cp.Manifest)
		}
		users[cp.Manifest] = append(users[cp.Manifest], cp.ID)
	}
	needs := map[Hash]*need{}
	for _, h := range order {
		sec.Checked++
		where := "manifests/" + h.String()
		entries, err := c.Store.Manifest(h)
		if err != nil {
			p := Problem{Kind: "manifest-corrupt", Where: where, What: err.Error(), Checkpoints: users[h],
				Fix: "restore this manifest from a backup of the state directory; the checkpoints that use it cannot be rewound to or diffed until then"}
			var ce *objects.CorruptError
			if errors.As(err, &ce) {
				p.What = ce.Reason
				if strings.Contains(ce.Reason, "missing") {
					p.Kind = "manifest-missing"
				}
			}
			sec.Problems = append(sec.Problems, p)
			continue
		}
		for i := range entries {
			e := &entries[i]
			if e.Type != manifest.TypeFile {
				continue
			}
			n := needs[e.Blob]
			if n == nil {
				n = &need{size: e.Size, path: e.Path}
				needs[e.Blob] = n
			}
			for _, id := range users[h] {
				if !slices.Contains(n.checkpoints, id) {
					n.checkpoints = append(n.checkpoints, id)
				}
			}
		}
	}
	return needs
}

// position checks that the position file reads and names a checkpoint that exists.
func (c *checker) position() {
	sec := c.section("position")
	sec.Checked = 1
	cur, safety, err := c.Store.Position()
	if err != nil {
		sec.Problems = append(sec.Problems, Problem{Kind: "position-corrupt", Where: "position", What: err.Error(),
			Fix: "rewind to a checkpoint (agent-rewind list shows them): it writes the position anew"})
		return
	}
	for _, id := range []string{cur, safety} {
		if id == "" {
			continue
		}
		if _, err := os.Lstat(filepath.Join(c.StateDir, "checkpoints", id)); errors.Is(err, fs.ErrNotExist) {
			sec.Problems = append(sec.Problems, Problem{Kind: "position-dangling", Where: "position", Checkpoints: []string{id},
				What: fmt.Sprintf("names checkpoint %s, which does not exist", id),
				Fix:  "restore checkpoints/" + id + " from a backup of the state directory, or rewind to another checkpoint"})
		}
	}
}
