package restore

import (
	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
	"github.com/agent-rewind/rewind/snapshot/internal/walk"
)

// Plan is what a restore will do.
type Plan struct {
	Changes []manifest.Change // to apply, sorted by path
	Kept    []Kept
}

// NewPlan compares the live entries with the wanted ones (both sorted by path) and drops what
// must not be touched: paths excluded by any of the rules, paths the target did not capture
// (TypeSkipped), paths whose live state was not captured (a live TypeSkipped: changing it would
// lose what nothing holds), and everything under a path kept for one of these reasons (a folder
// that holds a kept path is never removed nor replaced).
func NewPlan(live, want []manifest.Entry, r walk.Rules) Plan {
	var p Plan
	kept := map[string]bool{} // kept paths -> whether kept because in use (Kept.Live)
	keep := func(c *manifest.Change, reason string, inUse bool) {
		p.Kept = append(p.Kept, Kept{Path: c.Path, Reason: reason, Live: inUse})
		kept[c.Path] = inUse
	}
	for _, c := range manifest.Diff(live, want) {
		if under, inUse, ok := keptAncestor(kept, c.Path); ok {
			keep(&c, "inside "+under+", which the restore left alone", inUse)
			continue
		}
		switch {
		case c.To != nil && c.To.Type == manifest.TypeSkipped:
			keep(&c, "not captured by the target checkpoint ("+c.To.Reason+"); left as it is", false)
		case c.To == nil && c.From.Type == manifest.TypeSkipped && c.From.Reason == reasonUnstable:
			keep(&c, c.From.Reason+": not captured by the safety checkpoint, so left as it is; the target does not have it", true)
		case c.To == nil && c.From.Type == manifest.TypeSkipped:
			keep(&c, c.From.Reason+": never deleted by a restore", false)
		case c.From != nil && c.From.Type == manifest.TypeSkipped:
			keep(&c, c.From.Reason+": not captured by the safety checkpoint, so left as it is; the target's "+c.To.Type.String()+" there was not restored", true)
		case len(r) > 0 && c.To != nil && r.Excluded(c.Path, c.To.Type == manifest.TypeDir):
			keep(&c, "excluded by "+walk.IgnoreFile+"; not restored", false)
		case len(r) > 0 && c.From != nil && r.Excluded(c.Path, c.From.Type == manifest.TypeDir):
			keep(&c, "excluded by "+walk.IgnoreFile+"; not touched", false)
		default:
			p.Changes = append(p.Changes, c)
		}
	}
	return p
}

// reasonUnstable is the skip reason of a file that kept changing while a checkpoint read it
// (the capture's hashing writes it): a file in use, unlike a socket or FIFO, which no restore
// ever deletes.
const reasonUnstable = "changed while being read"

// keptAncestor returns the nearest ancestor of p in kept, and its Live flag.
func keptAncestor(kept map[string]bool, p string) (string, bool, bool) {
	if len(kept) == 0 {
		return "", false, false
	}
	for i := len(p) - 1; i > 0; i-- {
		if p[i] == '/' {
			if inUse, ok := kept[p[:i]]; ok {
				return p[:i], inUse, true
			}
		}
	}
	return "", false, false
}
