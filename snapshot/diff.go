package snapshot

import (
	"context"

	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
)

// ChangeKind says how a path differs between two states.
type ChangeKind = manifest.ChangeKind

// The change kinds. A file whose content and mode both changed is ChangeModified (a restore
// applies both); ChangeMode is a permission change alone.
const (
	ChangeAdded    = manifest.ChangeAdded    // only in the newer state
	ChangeDeleted  = manifest.ChangeDeleted  // only in the older state
	ChangeModified = manifest.ChangeModified // file content or symlink target
	ChangeMode     = manifest.ChangeMode     // permission bits only
	ChangeType     = manifest.ChangeType     // e.g. a file became a directory or a symlink
)

// SameMode reports whether permission bits a and b are alike as far as this system keeps them,
// the rule by which Diff tells a ChangeMode: on Windows, which keeps only the read-only
// attribute, by the owner's write bit alone; elsewhere all of them.
func SameMode(a, b uint32) bool { return manifest.SameMode(a, b) }

// Change is one path that differs. From is the entry in the older state (nil when added), To in
// the newer one (nil when deleted).
type Change = manifest.Change

// DiffResult is what Diff returns.
type DiffResult struct {
	From    string   `json:"from"` // checkpoint id
	To      string   `json:"to"`   // checkpoint id, or "" for the live workspace
	Changes []Change `json:"changes"`
	// Warnings are things that cost time but not correctness, such as a stat cache found wrong.
	Warnings []string `json:"warnings,omitempty"`
}

// Diff compares checkpoint a with checkpoint b, or with the live workspace when b is "". Both
// may be id prefixes. It takes no lock and stores nothing: the live side is hashed where the stat
// cache cannot vouch for a file (and, as a checkpoint does, where a random sample checks that it
// vouches truly); a stat cache found wrong is dropped, its only write.
func (s *Store) Diff(ctx context.Context, a, b string) (*DiffResult, error) {
	ida, err := s.Resolve(a)
	if err != nil {
		return nil, err
	}
	ea, err := s.checkpointEntries(ida)
	if err != nil {
		return nil, err
	}
	res := &DiffResult{From: ida}
	var eb []Entry
	if b == "" {
		c, err := s.captureLive(ctx, false)
		if err != nil {
			return nil, err
		}
		eb = c.manifest()
		res.Warnings = c.warnings
	} else {
		if res.To, err = s.Resolve(b); err != nil {
			return nil, err
		}
		if eb, err = s.checkpointEntries(res.To); err != nil {
			return nil, err
		}
	}
	res.Changes = manifest.Diff(ea, eb)
	if res.Changes == nil {
		res.Changes = []Change{}
	}
	return res, nil
}
