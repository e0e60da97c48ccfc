package agentws

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/agent-rewind/rewind/mcpserver"
	"github.com/agent-rewind/rewind/snapshot"
)

// BacktrackCandidates implements mcpserver.Workspace: every checkpoint of the timeline, ranked by
// RankCandidates, the first mcpserver.MaxCandidates of them (Truncated when there were more),
// each with the paths changed between it and the current position and its failure notes.
//
// Changed compares manifests, not the live tree: it counts the paths that differ between the
// candidate's manifest and the current position's (the rule of snapshot's Diff: added, deleted,
// content, mode or type changed; skipped entries never differ). Edits made since the current
// position was checkpointed are not counted. Each distinct manifest is read once per call.
func (w *Workspace) BacktrackCandidates(context.Context) (mcpserver.CandidatesResult, error) {
	empty := mcpserver.CandidatesResult{Candidates: []mcpserver.Candidate{}}
	ws, s, err := w.snapshots(false)
	if err != nil || s == nil {
		return empty, err
	}
	t, err := s.List()
	if err != nil {
		return mcpserver.CandidatesResult{}, err
	}
	notes, err := w.memory(ws).Notes()
	if err != nil {
		return mcpserver.CandidatesResult{}, err
	}
	byID := map[string][]Note{}
	for _, n := range notes {
		byID[n.Checkpoint] = append(byID[n.Checkpoint], n)
	}
	ranked := RankCandidates(t.Checkpoints, byID)
	r := empty
	if len(ranked) > mcpserver.MaxCandidates {
		ranked, r.Truncated = ranked[:mcpserver.MaxCandidates], true
	}
	m := manifests{s: s, cache: map[snapshot.Hash][]snapshot.Entry{}}
	var current *snapshot.Checkpoint
	for i := range t.Checkpoints {
		if t.Checkpoints[i].ID == t.Current {
			current = &t.Checkpoints[i]
		}
	}
	for _, c := range ranked {
		var changed int64
		if current != nil && c.Manifest != current.Manifest {
			a, err := m.entries(c)
			if err != nil {
				return mcpserver.CandidatesResult{}, err
			}
			b, err := m.entries(*current)
			if err != nil {
				return mcpserver.CandidatesResult{}, err
			}
			changed = CountChanges(a, b)
		}
		call := ""
		if c.Call != nil {
			call = c.Call.ID
		}
		r.Candidates = append(r.Candidates, mcpserver.Candidate{
			ID: c.ID, Label: c.Label, Time: c.Time, Changed: changed, Notes: failureNotes(byID[c.ID]), ToolCall: call,
		})
	}
	return r, nil
}

// RankCandidates orders checkpoints from most to least promising to go back to, and returns a
// new slice:
//
//  1. checkpoints taken on request before safety checkpoints (a safety checkpoint holds a
//     state that was being left behind);
//  2. then fewer failure notes first (a point that already failed more often is a worse bet);
//  3. then newer first (less work is lost);
//  4. then by id, so the order is total and stable.
func RankCandidates(cps []snapshot.Checkpoint, notes map[string][]Note) []snapshot.Checkpoint {
	out := slices.Clone(cps)
	slices.SortFunc(out, func(a, b snapshot.Checkpoint) int {
		if c := cmp.Compare(kindRank(a.Kind), kindRank(b.Kind)); c != 0 {
			return c
		}
		if c := cmp.Compare(len(notes[a.ID]), len(notes[b.ID])); c != 0 {
			return c
		}
		if c := b.Time.Compare(a.Time); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// kindRank orders kinds by how deliberately the state was kept: a checkpoint asked for, then an
// automatic one before a tool call, then a safety checkpoint.
func kindRank(k snapshot.Kind) int {
	switch k {
	case snapshot.KindAuto:
		return 1
	case snapshot.KindSafety:
		return 2
	}
	return 0
}

// manifests reads checkpoints' entries, each distinct manifest once.
type manifests struct {
	s     *snapshot.Store
	cache map[snapshot.Hash][]snapshot.Entry
}

func (m *manifests) entries(c snapshot.Checkpoint) ([]snapshot.Entry, error) {
	if e, ok := m.cache[c.Manifest]; ok {
		return e, nil
	}
	e, err := m.s.Entries(c.ID)
	if err != nil {
		return nil, checkpointError(err)
	}
	m.cache[c.Manifest] = e
	return e, nil
}

// CountChanges counts the paths that differ between two manifests (each sorted by path, as
// manifests are), by the rule of snapshot's Diff: a path in one only; a different type; for
// entries that are not skipped, a different content hash or symlink target, or (not for
// symlinks) permission bits that differ where this system keeps them (snapshot.SameMode).
func CountChanges(a, b []snapshot.Entry) int64 {
	var n int64
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch c := strings.Compare(a[i].Path, b[j].Path); {
		case c < 0:
			n++
			i++
		case c > 0:
			n++
			j++
		default:
			if differ(&a[i], &b[j]) {
				n++
			}
			i++
			j++
		}
	}
	return n + int64(len(a)-i) + int64(len(b)-j)
}

func differ(a, b *snapshot.Entry) bool {
	switch {
	case a.Type != b.Type:
		return true
	case a.Type == snapshot.TypeSkipped:
		return false
	case a.Blob != b.Blob || a.Target != b.Target:
		return true
	}
	return !snapshot.SameMode(a.Mode, b.Mode) && a.Type != snapshot.TypeSymlink
}
