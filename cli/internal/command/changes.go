package command

import (
	"fmt"
	"io"
	"strings"

	"github.com/agent-rewind/rewind/snapshot"
)

// ChangeCounts counts changes by kind; it is the "counts" member of the --json output of diff,
// rewind and replay.
type ChangeCounts struct {
	Added    int `json:"added"`
	Modified int `json:"modified"`
	Deleted  int `json:"deleted"`
	Mode     int `json:"mode"`
	Type     int `json:"type"`
}

// countChanges counts cs by kind.
func countChanges(cs []snapshot.Change) ChangeCounts {
	var n ChangeCounts
	for _, c := range cs {
		switch c.Kind {
		case snapshot.ChangeAdded:
			n.Added++
		case snapshot.ChangeModified:
			n.Modified++
		case snapshot.ChangeDeleted:
			n.Deleted++
		case snapshot.ChangeMode:
			n.Mode++
		case snapshot.ChangeType:
			n.Type++
		}
	}
	return n
}

// String is "3 added, 1 modified, 2 deleted" (kinds with none left out), or "no changes".
func (n ChangeCounts) String() string {
	var parts []string
	for _, p := range []struct {
		n    int
		name string
	}{{n.Added, "added"}, {n.Modified, "modified"}, {n.Deleted, "deleted"}, {n.Mode, "mode changed"}, {n.Type, "type changed"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%s %s", count(p.n), p.name))
		}
	}
	if len(parts) == 0 {
		return "no changes"
	}
	return strings.Join(parts, ", ")
}

// writeChanges prints one change a line, "  kind      path  (detail)", at most limit of them
// (0: all), then how many were left out.
func writeChanges(w io.Writer, cs []snapshot.Change, limit int) {
	for i, c := range cs {
		if limit > 0 && i == limit {
			fmt.Fprintf(w, "  … and %s more (--json lists every change)\n", count(len(cs)-limit))
			return
		}
		fmt.Fprintf(w, "  %-9s %s%s\n", c.Kind, printable(c.Path), changeDetail(c))
	}
}

// changeDetail is what a change line adds after the path: the old and new mode or type, or the
// symlink targets.
func changeDetail(c snapshot.Change) string {
	switch {
	case c.Kind == snapshot.ChangeMode:
		return fmt.Sprintf("  (%04o -> %04o)", c.From.Mode, c.To.Mode)
	case c.Kind == snapshot.ChangeType:
		return fmt.Sprintf("  (%s -> %s)", c.From.Type, c.To.Type)
	case c.Kind == snapshot.ChangeModified && c.To.Type == snapshot.TypeSymlink:
		return fmt.Sprintf("  (-> %s, was -> %s)", printable(c.To.Target), printable(c.From.Target))
	case c.Kind == snapshot.ChangeModified && c.From.Mode != c.To.Mode:
		return fmt.Sprintf("  (and mode %04o -> %04o)", c.From.Mode, c.To.Mode)
	case c.Kind == snapshot.ChangeAdded && c.To.Type != snapshot.TypeFile:
		return fmt.Sprintf("  (%s)", c.To.Type)
	case c.Kind == snapshot.ChangeDeleted && c.From.Type != snapshot.TypeFile:
		return fmt.Sprintf("  (%s)", c.From.Type)
	}
	return ""
}
