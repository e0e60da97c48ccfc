package snapshot

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
	"github.com/agent-rewind/rewind/snapshot/internal/walk"
)

// Where a file keeps fewer permission bits than a checkpoint records (Windows keeps only the
// write bit: manifest.ModeBitsKept), a live file's mode says nothing of the rest. A capture of
// the live workspace (for a checkpoint, a diff, a rewind's plan) then takes them from the entry
// the current checkpoint has for the path, when the two are alike (manifest.SameMode): a
// checkpoint made on Linux, rewound on Windows, checkpointed there and rewound on Linux again
// keeps its executables executable, and the workspace as a rewind left it is unchanged, not a
// mode change of every executable.

// inheritModes gives the capture's entries the recorded modes of the current checkpoint's
// (inheritFrom). A folder holding an entry whose mode that changed has no cached tree to reuse:
// the cache's was encoded with the mode as it was then (by the capture before a rewind, which
// took it from the checkpoint rewound from). Where every bit is kept it does nothing and reads
// nothing.
func (s *Store) inheritModes(c *capture) error {
	if manifest.ModeBitsKept == 0o7777 {
		return nil
	}
	pos, err := s.readPosition()
	if err != nil || pos.Current == "" {
		return err
	}
	cur, err := s.readCheckpoint(pos.Current)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // nothing recorded to inherit from
	}
	if err != nil {
		return err
	}
	// A folder whose cached tree the capture reuses and the current checkpoint has is not read:
	// that tree was encoded with the modes inherited then, and is what is recorded again.
	reuse := c.reusableTrees()
	ref, _, err := s.readManifestKnown(cur.Manifest, func(dir string, h Hash) ([]Entry, bool) {
		got, ok := reuse[dir]
		return nil, ok && got == h
	})
	if err != nil {
		// The checkpoint that fails to read says so where it is used (check finds it); the
		// capture goes on with the modes as this system shows them.
		c.warnings = append(c.warnings, fmt.Sprintf("the current checkpoint %s could not be read for the permission bits this system does not keep, which are recorded as it shows them: %v", pos.Current, err))
		return nil
	}
	for _, p := range inheritFrom(c.scan.Entries, ref) {
		delete(c.dirTrees, manifest.ParentDir(p))
	}
	return nil
}

// inheritFrom sets each live entry's mode to that of ref's entry for its path (both sorted by
// path) when the two are of one type and alike on this system, and returns the paths whose
// mode that changed.
func inheritFrom(live []walk.LiveEntry, ref []Entry) (changed []string) {
	j := 0
	for i := range live {
		e := &live[i]
		for j < len(ref) && ref[j].Path < e.Path {
			j++
		}
		if j == len(ref) {
			break
		}
		if r := &ref[j]; r.Path == e.Path && inherit(&e.Entry, r) {
			changed = append(changed, e.Path)
		}
	}
	return changed
}

// inherit gives e r's mode if they are one path's entries of one type, alike on this system,
// and reports whether that changed e's.
func inherit(e, r *Entry) bool {
	if r.Type == e.Type && (e.Type == TypeFile || e.Type == TypeDir) && r.Mode != e.Mode && manifest.SameMode(r.Mode, e.Mode) {
		e.Mode = r.Mode
		return true
	}
	return false
}

// inheritTaken is inherit for the tree edit (treeedit.go): the entries it takes out of the
// current manifest, by full path, give their modes to what it looked at in their place.
func inheritTaken(looked []walk.LiveEntry, taken map[string]Entry) {
	for i := range looked {
		if r, ok := taken[looked[i].Path]; ok {
			inherit(&looked[i].Entry, &r)
		}
	}
}
