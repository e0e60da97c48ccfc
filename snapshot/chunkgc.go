package snapshot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agent-rewind/rewind/internal/durable"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
)

// keepChunks adds to keep the chunks of every kept content stored in chunks. A kept chunk list
// that cannot be read fails GC before it removes anything: which chunks it needs is unknown.
func (s *Store) keepChunks(keep map[Hash]bool) error {
	names, err := platform.ReadDirNames(filepath.Dir(s.objects.ListPath(Hash{})))
	if err != nil {
		return err
	}
	for _, n := range names {
		h, err := ParseHash(n)
		if err != nil || !keep[h] {
			continue
		}
		chunks, _, err := s.objects.ReadChunkList(h)
		if err != nil {
			return fmt.Errorf("gc: %w (nothing was removed; agent-rewind check names the file that needs it, check --repair stores it again from the workspace if a file there still has it)", err)
		}
		for _, c := range chunks {
			keep[c.Hash] = true
		}
	}
	return nil
}

// removeChunkLists removes the chunk lists of contents not in keep, before their chunks go: a
// crash in between leaves chunks no list names, never a list naming removed chunks.
func (s *Store) removeChunkLists(keep map[Hash]bool, res *GCResult, dryRun bool) error {
	dir := filepath.Dir(s.objects.ListPath(Hash{}))
	names, err := platform.ReadDirNames(dir)
	if err != nil || len(names) == 0 {
		return err
	}
	removed := false
	for _, n := range names {
		h, err := ParseHash(n)
		if err != nil || keep[h] {
			continue
		}
		name := filepath.Join(dir, n)
		if fi, err := os.Lstat(name); err == nil {
			res.BytesFreed += fi.Size()
		}
		res.ObjectsRemoved++
		if dryRun {
			continue
		}
		if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("gc: %w", err)
		}
		removed = true
	}
	if removed {
		return durable.SyncDir(dir)
	}
	return nil
}
