package snapshot

import (
	"context"
	"sync/atomic"

	"github.com/agent-rewind/rewind/snapshot/internal/check"
	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
)

// CheckOptions chooses how deep Check looks and whether it repairs (see internal/check).
type CheckOptions = check.Options

// CheckReport is what Check found, section by section (FORMAT.md, "Check").
type CheckReport = check.Report

// CheckSection is one part of the store and what was wrong with it.
type CheckSection = check.Section

// Problem is one thing Check found wrong: what, where, and what to do.
type Problem = check.Problem

// Check verifies the whole store against its format: every checkpoint's metadata and manifest
// parse and hash to their names, every content a manifest names is stored (and with ReadData
// hashes to its name), every pack index reads, the position names a checkpoint, and every stat
// cache entry that vouches for a file matches the file's content (each such file is read). It
// holds the writers' lock, so it sees no write in progress, and reports what interrupted writes
// left. With Repair it fixes what it can without losing anything (see CheckOptions).
func (s *Store) Check(ctx context.Context, opts CheckOptions) (*CheckReport, error) {
	unlock, err := s.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	// What the commit log holds is written back and synced first; should that fail (a file it
	// names is damaged), the check below reports the file.
	s.settleLog()
	return check.Run(ctx, check.Config{Store: checkLayer{s}, Objects: s.objects, StateDir: s.state, Root: s.root, Options: opts})
}

// checkLayer is what the checker reads through this package: checkpoints' metadata, the
// position, manifests, and the live workspace.
type checkLayer struct{ s *Store }

func (c checkLayer) Checkpoint(name string) (check.Checkpoint, bool, error) {
	if !validID(name) {
		return check.Checkpoint{}, false, nil
	}
	cp, err := c.s.readCheckpoint(name)
	if err != nil {
		return check.Checkpoint{}, true, err
	}
	return check.Checkpoint{ID: cp.ID, Manifest: cp.Manifest}, true, nil
}

func (c checkLayer) Manifest(h Hash) ([]manifest.Entry, error) { return c.s.readManifest(h) }

func (c checkLayer) Position() (current, safety string, err error) {
	pos, err := c.s.readPosition()
	if err != nil {
		return "", "", err
	}
	if pos.Last != nil {
		safety = pos.Last.Safety
	}
	return pos.Current, safety, nil
}

func (c checkLayer) HashFile(name string, st platform.Stat) (Hash, error) {
	var read atomic.Int64 // hashFile counts the bytes it read; nothing reports them here
	return hashFile(name, st, nil, &read)
}

func (c checkLayer) LiveFiles(ctx context.Context) ([]manifest.Entry, error) {
	live, err := c.s.captureLive(ctx, false)
	if err != nil {
		return nil, err
	}
	return live.manifest(), nil
}

func (c checkLayer) OwnTemp(name string) bool { return lockedTemp(name) }
