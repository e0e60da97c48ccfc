package upkeep

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agent-rewind/rewind/internal/durable"
	"github.com/agent-rewind/rewind/snapshot/internal/objects"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
)

// Sweep is one removal of what Live does not keep (the sweep of mark-and-sweep), in the store
// whose state directory is StateDir. The caller holds the writers' lock and has already removed
// the checkpoints it does not keep: a crash at any point then leaves only files nothing refers
// to, which the next sweep removes.
type Sweep struct {
	Objects  *objects.Store
	StateDir string
	Live     *Live
	DryRun   bool      // count what would go, remove nothing
	Now      time.Time // temporary files in StateDir older than TempAge before it are a crash's
}

// Swept is what a sweep removed (or, in a dry run, would remove).
type Swept struct {
	Manifests   int   // manifests no kept checkpoint uses
	Objects     int   // loose and packed objects and chunk lists
	Bytes       int64 // their size
	PacksMerged int   // small packs rewritten as one
}

// Run removes, in this order, the temporary files of interrupted durable writes, the manifests,
// the chunk lists, the loose objects and the packed objects Live does not keep (the packs
// rewritten: SweepPacks). Chunk lists go before their chunks, so a crash leaves chunks no list
// names, never a list naming removed chunks.
func (sw Sweep) Run(ctx context.Context) (*Swept, error) {
	res := &Swept{}
	if err := sw.removeTemps(); err != nil {
		return nil, err
	}
	if err := sw.removeManifests(res); err != nil {
		return nil, err
	}
	if err := sw.removeChunkLists(res); err != nil {
		return nil, err
	}
	if err := sw.removeLoose(ctx, res); err != nil {
		return nil, err
	}
	if err := SweepPacks(sw.Objects, sw.Live.Objects, res, sw.DryRun); err != nil {
		return nil, err
	}
	return res, nil
}

// remove removes one file, unless this is a dry run; a file already gone is not an error.
func (sw Sweep) remove(name string) error {
	if sw.DryRun {
		return nil
	}
	if err := os.Remove(name); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("gc: %w", err)
	}
	return nil
}

// removeTemps removes the temporary files of durable writes a crash interrupted. The lock
// excludes live ones in checkpoints/ and manifests/; the state directory's own are also written
// by other parts of the store under their own locks (the chain, the ledger, the gateway's
// receipt), so there only those too old to belong to a write in progress go.
func (sw Sweep) removeTemps() error {
	state := sw.StateDir
	for _, dir := range []string{state, filepath.Join(state, "checkpoints"), filepath.Join(state, "manifests")} {
		names, err := platform.ReadDirNames(dir)
		if err != nil {
			return err
		}
		for _, n := range names {
			if dir == state && strings.HasPrefix(n, ".tmp-") && !staleTemp(filepath.Join(dir, n), sw.Now) {
				continue
			}
			if strings.HasPrefix(n, ".tmp-") {
				if err := sw.remove(filepath.Join(dir, n)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// removeManifests removes the manifests Live does not keep.
func (sw Sweep) removeManifests(res *Swept) error {
	mdir := filepath.Join(sw.StateDir, "manifests")
	names, err := platform.ReadDirNames(mdir)
	if err != nil {
		return err
	}
	for _, n := range names {
		h, err := objects.ParseHash(n)
		if err != nil || sw.Live.Manifests[h] {
			continue
		}
		if err := sw.remove(filepath.Join(mdir, n)); err != nil {
			return err
		}
		res.Manifests++
	}
	return nil
}

// removeChunkLists removes the chunk lists of contents Live does not keep, before their chunks go.
func (sw Sweep) removeChunkLists(res *Swept) error {
	dir := filepath.Dir(sw.Objects.ListPath(Hash{}))
	names, err := platform.ReadDirNames(dir)
	if err != nil || len(names) == 0 {
		return err
	}
	removed := false
	for _, n := range names {
		h, err := objects.ParseHash(n)
		if err != nil || sw.Live.Objects[h] {
			continue
		}
		name := filepath.Join(dir, n)
		if fi, err := os.Lstat(name); err == nil {
			res.Bytes += fi.Size()
		}
		res.Objects++
		if sw.DryRun {
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

// removeLoose removes the loose objects Live does not keep (packed ones: SweepPacks).
func (sw Sweep) removeLoose(ctx context.Context, res *Swept) error {
	return sw.Objects.Loose(func(h Hash, name string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if sw.Live.Objects[h] {
			return nil
		}
		if fi, err := os.Lstat(name); err == nil {
			res.Bytes += fi.Size()
		}
		if err := sw.remove(name); err != nil {
			return err
		}
		res.Objects++
		return nil
	})
}

// TempAge is how old a temporary file in the state directory must be before a sweep takes it
// for one a crash left: a durable write there (a few kilobytes to a few megabytes) lasts
// milliseconds.
const TempAge = time.Hour

// staleTemp reports whether the temporary file name was last written more than TempAge ago.
func staleTemp(name string, now time.Time) bool {
	st, err := os.Lstat(name)
	return err == nil && now.Sub(st.ModTime()) > TempAge
}
