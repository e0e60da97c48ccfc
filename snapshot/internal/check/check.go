package check

import (
	"context"
	"path/filepath"
	"time"

	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
	"github.com/agent-rewind/rewind/snapshot/internal/objects"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
)

// Hash names a stored object, manifest or tree.
type Hash = objects.Hash

// Store is what a check needs of the snapshot layer above it, which alone reads checkpoints'
// metadata and the position, expands manifests, and hashes the workspace's files.
type Store interface {
	// Checkpoint reads checkpoints/<name>; isID false: name is not a checkpoint's (a temporary
	// file, reported with the leftovers). A damaged file is a *objects.CorruptError.
	Checkpoint(name string) (c Checkpoint, isID bool, err error)
	// Manifest returns the entries of the manifest h, its trees expanded.
	Manifest(h Hash) ([]manifest.Entry, error)
	// Position returns the checkpoints the position names: the current one and the safety
	// checkpoint of the last rewind or replay ("" when none).
	Position() (current, safety string, err error)
	// HashFile hashes the workspace file name, which lstat saw as st; an error when it changed
	// while read (not evidence either way) or cannot be read.
	HashFile(name string, st platform.Stat) (Hash, error)
	// LiveFiles captures the workspace without storing anything: its entries with their hashes.
	LiveFiles(ctx context.Context) ([]manifest.Entry, error)
	// OwnTemp reports whether a name in the state directory is one of the temporary files the
	// store writes there under its writers' lock (others belong to other modules).
	OwnTemp(name string) bool
}

// Checkpoint is what a check needs of a checkpoint's metadata.
type Checkpoint struct {
	ID       string
	Manifest Hash
}

// Config is one check: of the store whose state directory is StateDir (its objects Objects,
// its metadata Store), protecting the workspace at Root.
type Config struct {
	Store    Store
	Objects  *objects.Store
	StateDir string
	Root     string
	Options  Options
}

// Run verifies the whole store against its format: every checkpoint's metadata and manifest
// parse and hash to their names, every content a manifest names is stored (and with ReadData
// hashes to its name), every pack index reads, the position names a checkpoint, and every stat
// cache entry that vouches for a file matches the file's content (each such file is read); it
// reports what interrupted writes left. With Repair it fixes what it can without losing
// anything (see Options). The caller holds the writers' lock, so no write is in progress.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	c := &checker{Config: cfg, bad: map[Hash]badObject{},
		quarantine: filepath.Join(cfg.StateDir, "quarantine", time.Now().UTC().Format("20060102T150405.000000000Z"))}
	cps := c.checkpoints()
	var rebuilt []Problem
	if cfg.Options.Repair { // before anything reads the packs: the manifests' trees may be in them
		var err error
		if rebuilt, err = c.rebuildPacks(cps); err != nil {
			return nil, err
		}
	}
	needs := c.manifests(cps)
	packed := c.packs(rebuilt)
	if err := c.contents(ctx, needs, packed); err != nil {
		return nil, err
	}
	c.position()
	if err := c.statCache(ctx, packed); err != nil {
		return nil, err
	}
	if cfg.Options.Repair {
		if err := c.storeFromLive(ctx); err != nil {
			return nil, err
		}
	}
	if err := c.leftovers(); err != nil {
		return nil, err
	}
	rep := &Report{Sections: make([]Section, len(c.sections))}
	for i, sec := range c.sections {
		rep.Sections[i] = *sec
	}
	return rep, nil
}

// checker holds one check's state.
type checker struct {
	Config
	sections   []*Section
	quarantine string // where Repair moves files aside
	bad        map[Hash]badObject
}

// badObject is a content reported missing or damaged: its problem, which Repair may fix from
// a workspace file that still has the content.
type badObject struct {
	sec *Section
	i   int // index in sec.Problems
}

func (c *checker) section(name string) *Section {
	sec := &Section{Name: name, Problems: []Problem{}}
	c.sections = append(c.sections, sec)
	return sec
}

// rel names the file name relative to the state directory, as a Problem's Where does.
func (c *checker) rel(name string) string {
	if r, err := filepath.Rel(c.StateDir, name); err == nil {
		return filepath.ToSlash(r)
	}
	return name
}

// location is where a packed object is: the pack file and its entry.
type location struct {
	pack string
	objects.PackEntry
}
