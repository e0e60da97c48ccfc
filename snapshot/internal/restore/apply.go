package restore

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
	"github.com/agent-rewind/rewind/snapshot/internal/objects"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
)

// Source reads stored contents by hash. The reader must fail, before its end, when the bytes do
// not hash to h (an objects.CorruptError): a restore never renames a damaged file into place.
type Source interface {
	Open(h objects.Hash) (io.ReadCloser, error)
}

// Options is what Apply needs of the workspace and the store.
type Options struct {
	Root   string // the workspace root
	Source Source // the target's contents
	// Seen returns the stat the live capture (the safety checkpoint's) recorded for a path:
	// Apply replaces or deletes only a live path that still has it.
	Seen        func(p string) (platform.Stat, bool)
	Parallelism int           // files written at once (at least 1)
	Done        *atomic.Int64 // counts the changes applied, for progress; may be nil
	BeforeApply func()        // tests only: runs before the first change
}

// applier carries out a plan inside an os.Root, which guarantees that no operation leaves the
// workspace whatever the file system holds; on top of that every parent directory is checked
// with lstat to be a real directory, and final components are never followed, so nothing is
// written through a symlink.
//
// It changes only what the live capture saw: before it replaces or deletes a live path it checks
// that the path still has the stat that capture recorded (the safety checkpoint holds exactly
// that state), and before it creates a path that nothing occupied, that nothing occupies it now.
// A path that changed or appeared since (a log a dev server appends to, a file an agent's tool
// writes during the rewind) is left alone and reported, never overwritten: the safety checkpoint
// does not hold its present content. A small window remains between that check and the rename or
// unlink that follows it (microseconds), which no portable call closes.
type applier struct {
	o        Options
	root     *os.Root
	mu       sync.Mutex      // guards the maps and kept: files are written in parallel
	verified map[string]bool // directories checked to be real directories
	touched  map[string]bool // paths written or chmodded (their stat changed)
	blocked  map[string]bool // paths left alone while applying: nothing under them is written
	kept     []Kept
	done     *atomic.Int64
}

// Apply carries out p in the workspace o.Root. It returns the paths it changed and what it had
// to leave alone. An error stops it part way: running the same plan again (against a new capture)
// finishes it, which is what the caller's journal is for.
func Apply(ctx context.Context, p *Plan, o Options) (touched map[string]bool, kept []Kept, err error) {
	root, err := os.OpenRoot(o.Root)
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	if o.Done == nil {
		o.Done = new(atomic.Int64)
	}
	if o.BeforeApply != nil {
		o.BeforeApply()
	}
	a := &applier{o: o, root: root, verified: map[string]bool{}, touched: map[string]bool{}, blocked: map[string]bool{}, done: o.Done}
	if err := a.removeAll(ctx, p.Changes); err != nil {
		return nil, nil, err
	}
	dirModes, err := a.makeDirs(ctx, p.Changes)
	if err != nil {
		return nil, nil, err
	}
	if err := a.writeAll(ctx, p.Changes); err != nil {
		return nil, nil, err
	}
	// 4. Directory modes, deepest first, so a read-only directory is filled before it is locked.
	for i := len(dirModes) - 1; i >= 0; i-- {
		if err := a.chmodDir(dirModes[i]); err != nil {
			return nil, nil, err
		}
	}
	return a.touched, a.kept, nil
}

// removeAll is step 1: remove, deepest first, what the target does not have and what changes
// type.
func (a *applier) removeAll(ctx context.Context, changes []manifest.Change) error {
	for i := len(changes) - 1; i >= 0; i-- {
		c := &changes[i]
		if c.From == nil || (c.Kind != manifest.ChangeDeleted && c.Kind != manifest.ChangeType) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := a.remove(c); err != nil {
			return err
		}
		if c.Kind == manifest.ChangeDeleted {
			a.done.Add(1)
		}
	}
	return nil
}

// makeDirs is step 2: the directories, parents first. They stay writable (0700) until step 4,
// which sets the modes it returns.
func (a *applier) makeDirs(ctx context.Context, changes []manifest.Change) ([]*manifest.Entry, error) {
	var dirModes []*manifest.Entry
	for i := range changes {
		c := &changes[i]
		if c.To == nil || c.To.Type != manifest.TypeDir {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := a.put(c); err != nil {
			return nil, err
		}
		if !a.isBlocked(c.Path) {
			dirModes = append(dirModes, c.To)
		}
		a.done.Add(1)
	}
	return dirModes, nil
}

// writeAll is step 3: files and symlinks. Their parents exist now, so they are independent and
// written in parallel (a rewind across an npm install rewrites tens of thousands).
func (a *applier) writeAll(ctx context.Context, changes []manifest.Change) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(a.o.Parallelism, 1))
	for i := range changes {
		c := &changes[i]
		if c.To == nil || c.To.Type == manifest.TypeDir {
			continue
		}
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			err := a.put(c)
			a.done.Add(1)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return ctx.Err()
}

func (a *applier) full(p string) string { return filepath.Join(a.o.Root, p) }
