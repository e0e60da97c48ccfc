package check

import (
	"path/filepath"

	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
	"github.com/agent-rewind/rewind/snapshot/internal/objects"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
	"github.com/agent-rewind/rewind/snapshot/internal/statcache"
)

// wantedContents returns the size of every content the store names, by hash: in the manifests
// that read (their trees found), the chunk lists and the stat cache. A pack's objects were new
// to the checkpoint (or gc) that wrote it, so those that anything still needs are among them.
func (c *checker) wantedContents(cps []Checkpoint) map[Hash]int64 {
	want := map[Hash]int64{}
	for _, cp := range cps {
		entries, err := c.Store.Manifest(cp.Manifest)
		if err != nil {
			continue // check reports it
		}
		for _, e := range entries {
			if e.Type == manifest.TypeFile {
				want[e.Blob] = e.Size
			}
		}
	}
	if names, err := platform.ReadDirNames(filepath.Dir(c.Objects.ListPath(Hash{}))); err == nil {
		for _, n := range names {
			if h, err := objects.ParseHash(n); err == nil {
				if chunks, _, err := c.Objects.ReadChunkList(h); err == nil {
					for _, c := range chunks {
						want[c.Hash] = c.Size
					}
				}
			}
		}
	}
	if idx, _, err := statcache.Load(filepath.Join(c.StateDir, "index")); err == nil {
		for i := range idx.Entries {
			if e := &idx.Entries[i]; !statcache.IsDir(e) {
				want[e.Blob] = e.St.Size
			}
		}
	}
	return want
}
