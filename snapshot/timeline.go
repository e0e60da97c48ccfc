package snapshot

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agent-rewind/rewind/internal/regular"
	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
	"github.com/agent-rewind/rewind/snapshot/internal/objects"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
)

// Timeline is every checkpoint, oldest first, and where the workspace is. Parent links make it a
// tree: a checkpoint taken after a rewind has the rewound-to checkpoint as its parent.
type Timeline struct {
	Checkpoints []Checkpoint `json:"checkpoints"`
	Current     string       `json:"current"`               // "" before the first checkpoint
	Last        *Operation   `json:"last,omitempty"`        // the last rewind or replay
	LastRestore *Operation   `json:"lastRestore,omitempty"` // the last restore of chosen paths
	// Sessions groups the tool calls that had an automatic checkpoint by agent session (only
	// calls whose checkpoint still exists); absent when there are none.
	Sessions []Session `json:"sessions,omitempty"`
}

// List returns the timeline. It takes no lock.
func (s *Store) List() (*Timeline, error) {
	cps, err := s.listCheckpoints()
	if err != nil {
		return nil, err
	}
	pos, err := s.readPosition()
	if err != nil {
		return nil, err
	}
	t := &Timeline{Checkpoints: make([]Checkpoint, len(cps)), Current: pos.Current, Last: pos.Last, LastRestore: pos.LastRestore}
	exists := make(map[string]bool, len(cps))
	for i, c := range cps {
		t.Checkpoints[i] = *c
		exists[c.ID] = true
	}
	calls, err := s.readCalls()
	if err != nil {
		return nil, err
	}
	t.Sessions = groupSessions(calls, exists)
	return t, nil
}

// Get returns a checkpoint's metadata; ref may be an id prefix.
func (s *Store) Get(ref string) (*Checkpoint, error) {
	id, err := s.Resolve(ref)
	if err != nil {
		return nil, err
	}
	return s.readCheckpoint(id)
}

// Entries returns the manifest of a checkpoint (ref may be an id prefix), verified and parsed.
func (s *Store) Entries(ref string) ([]Entry, error) {
	id, err := s.Resolve(ref)
	if err != nil {
		return nil, err
	}
	return s.checkpointEntries(id)
}

// minPrefix is the shortest id prefix Resolve accepts.
const minPrefix = 4

// Resolve turns an id or a unique id prefix (at least 4 hex digits, any case) into a full id, or
// the id of a tool call that had an automatic checkpoint into the checkpoint of the state before
// it. An unknown ref is ErrNotFound; a prefix that matches several ids is an *AmbiguousError
// listing them.
func (s *Store) Resolve(ref string) (string, error) {
	id, err := s.resolveID(ref)
	if errors.Is(err, ErrNotFound) && strings.TrimSpace(ref) != "" {
		if cid, cerr := s.resolveCall(strings.TrimSpace(ref)); cerr == nil {
			return cid, nil
		} else if !objects.IsLowerHex(strings.ToLower(strings.TrimSpace(ref))) {
			return "", cerr
		}
	}
	return id, err
}

// resolveID resolves a checkpoint id or id prefix.
func (s *Store) resolveID(ref string) (string, error) {
	p := strings.ToLower(strings.TrimSpace(ref))
	if len(p) < minPrefix || len(p) > IDLen || !objects.IsLowerHex(p) {
		return "", fmt.Errorf("%w: %q is not a checkpoint id: give %d to %d hex digits (see agent-rewind list)", ErrNotFound, ref, minPrefix, IDLen)
	}
	if len(p) == IDLen {
		if _, err := os.Lstat(filepath.Join(s.state, "checkpoints", p)); err == nil {
			return p, nil
		}
		return "", fmt.Errorf("%w: %s (see agent-rewind list)", ErrNotFound, p)
	}
	names, err := platform.ReadDirNames(filepath.Join(s.state, "checkpoints"))
	if err != nil {
		return "", err
	}
	var hits []string
	for _, n := range names {
		if validID(n) && strings.HasPrefix(n, p) {
			hits = append(hits, n)
		}
	}
	switch len(hits) {
	case 0:
		return "", fmt.Errorf("%w: no checkpoint id starts with %q (see agent-rewind list)", ErrNotFound, p)
	case 1:
		return hits[0], nil
	}
	slices.Sort(hits)
	return "", &AmbiguousError{Prefix: p, Candidates: hits}
}

// checkpointEntries reads, verifies and parses checkpoint id's manifest.
func (s *Store) checkpointEntries(id string) ([]Entry, error) {
	c, err := s.readCheckpoint(id)
	if err != nil {
		return nil, err
	}
	return s.readManifest(c.Manifest)
}

// readManifest reads manifest h, checks that its bytes hash to h, and parses it.
func (s *Store) readManifest(h Hash) ([]Entry, error) {
	entries, _, err := s.readManifestTrees(h)
	return entries, err
}

// readManifestTrees is readManifest that also returns the hashes of the subdirectories' trees
// the manifest is made of (none for a flat manifest of a store written before trees).
func (s *Store) readManifestTrees(h Hash) ([]Entry, []Hash, error) {
	return s.readManifestKnown(h, nil)
}

// readManifestKnown is readManifestTrees that takes the subtrees known gives without reading
// them (see expandTreeKnown).
func (s *Store) readManifestKnown(h Hash, known manifest.KnownTree) ([]Entry, []Hash, error) {
	name := filepath.Join(s.state, "manifests", h.String())
	b, err := s.readManifestRoot(h)
	if err != nil {
		return nil, nil, err
	}
	if bytes.HasPrefix(b, []byte(manifest.Magic)) {
		entries, err := ParseManifest(b) // a flat manifest (FORMAT.md, "Manifests written before trees")
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		return entries, nil, nil
	}
	tr := objects.NewReader(s.objects)
	defer tr.Close()
	entries, subtrees, err := manifest.ExpandTreeKnown(b, tr.Read, known)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	return entries, subtrees, nil
}

// readManifestRoot reads manifest h's file (the root tree, or a flat manifest) and checks that
// its bytes hash to h.
func (s *Store) readManifestRoot(h Hash) ([]byte, error) {
	name := filepath.Join(s.state, "manifests", h.String())
	b, err := regular.ReadFile(name)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, &CorruptError{Path: name, Reason: "manifest is missing"}
		}
		return nil, err
	}
	if got := objects.Sum(b); got != h {
		return nil, &CorruptError{Path: name, Reason: fmt.Sprintf("content hashes to %s", got)}
	}
	return b, nil
}

// Current returns the id of the checkpoint the workspace was last made equal to or captured as
// ("" before the first checkpoint). It reads one small file, so callers on a hot path (the
// effect guard records the current checkpoint with each admission) can afford it.
func (s *Store) Current() (string, error) {
	p, err := s.readPosition()
	if err != nil {
		return "", err
	}
	return p.Current, nil
}
