package command

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agent-rewind/rewind/snapshot"
)

// renderGraph draws a timeline as a graph, newest first, one lane per branch, as
// "git log --graph --topo-order" does:
//
//	@  4d5e6f7a8b9c  2025-11-30 14:09:00  after the rewind  (3 files, 120 B)
//	| *  9abc0123def4  2025-11-30 14:08:00  [safety] before rewind to 0a1b2c3d4e5f  (4 files, 160 B)
//	| *  1f2e3d4c5b6a  2025-11-30 14:07:00  second  (4 files, 160 B)
//	|/
//	*  0a1b2c3d4e5f  2025-11-30 14:06:00  first  (3 files, 120 B)
//
// A rewind makes history branch: the checkpoints taken after it are children of the checkpoint
// rewound to, beside the line that led to the rewind (which ends in the rewind's safety
// checkpoint). "@" marks the current position, "*" every other checkpoint.
//
// Order: a depth-first walk from the roots, reversed (see graphOrder); so every checkpoint
// comes before its parent, each branch is drawn contiguously (no lane ever crosses another),
// and the branch with the newest checkpoint is on top, in the leftmost lane. A checkpoint whose parent is
// not in the timeline (removed by gc) starts a tree of its own. Times are shown in loc.
func renderGraph(t *snapshot.Timeline, loc *time.Location) []string {
	return renderPage(t, nil, loc)
}

// renderPage is renderGraph for one page of a longer timeline: a parent in older (the
// checkpoints on older pages) is named as such rather than as removed by gc.
func renderPage(t *snapshot.Timeline, older map[string]bool, loc *time.Location) []string {
	order := graphOrder(t.Checkpoints)
	known := make(map[string]bool, len(t.Checkpoints))
	width := 0
	for i := range t.Checkpoints {
		known[t.Checkpoints[i].ID] = true
	}
	type row struct {
		graph string
		cp    *snapshot.Checkpoint // nil for a row that only joins lanes
	}
	var rows []row
	var lanes []string // lanes[i]: the checkpoint lane i waits for (the parent of its last node)
	// join removes lane r, drawing every lane right of it one column to the left: "| |/ /".
	join := func(r int) {
		g := make([]byte, 2*len(lanes)-1)
		for i := range g {
			g[i] = ' '
		}
		for i := range lanes {
			if i < r {
				g[2*i] = '|'
			} else if i > r || r > 0 {
				g[2*i-1] = '/'
			}
		}
		lanes = append(lanes[:r], lanes[r+1:]...)
		rows = append(rows, row{graph: strings.TrimRight(string(g), " ")})
	}
	for _, c := range order {
		var waiting []int
		for i, id := range lanes {
			if id == c.ID {
				waiting = append(waiting, i)
			}
		}
		col := len(lanes)
		if len(lanes) == 0 && len(rows) > 0 {
			rows = append(rows, row{}) // a blank line between separate trees
		}
		if len(waiting) == 0 {
			lanes = append(lanes, c.ID) // a branch tip: a new lane on the right
		} else {
			col = waiting[0]
			// Several children: their lanes join this one, the rightmost first, a row each.
			for k := len(waiting) - 1; k > 0; k-- {
				join(waiting[k])
			}
		}
		g := make([]byte, 2*len(lanes)-1)
		for i := range g {
			g[i] = ' '
		}
		for i := range lanes {
			g[2*i] = '|'
		}
		g[2*col] = '*'
		if c.ID == t.Current {
			g[2*col] = '@'
		}
		rows = append(rows, row{graph: string(g), cp: c})
		width = max(width, len(g))
		if c.Parent != "" && known[c.Parent] {
			lanes[col] = c.Parent
		} else if col == len(lanes)-1 {
			lanes = lanes[:col] // a root: its lane ends here
		} else {
			join(col)
		}
	}
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		if r.cp == nil {
			out = append(out, r.graph)
			continue
		}
		out = append(out, fmt.Sprintf("%-*s  %s", width, r.graph, describeCheckpoint(r.cp, t.Current, known, older, loc)))
	}
	return out
}

// graphOrder returns the checkpoints (oldest first, as List returns them) in the graph's order:
// a depth-first walk from each root, reversed. Siblings (and roots) are walked in the order of
// the newest checkpoint in their subtree, so the branch with the latest activity is walked last
// and drawn first, on top, in the leftmost lane.
func graphOrder(cps []snapshot.Checkpoint) []*snapshot.Checkpoint {
	known := make(map[string]bool, len(cps))
	for i := range cps {
		known[cps[i].ID] = true
	}
	// latest[id]: the newest time in id's subtree. Children are newer than their parent, so one
	// pass from the newest checkpoint to the oldest sees every child before its parent.
	latest := make(map[string]time.Time, len(cps))
	for i := len(cps) - 1; i >= 0; i-- {
		c := &cps[i]
		if c.Time.After(latest[c.ID]) {
			latest[c.ID] = c.Time
		}
		if c.Parent != "" && latest[c.ID].After(latest[c.Parent]) {
			latest[c.Parent] = latest[c.ID]
		}
	}
	children := map[string][]*snapshot.Checkpoint{}
	var roots []*snapshot.Checkpoint
	for i := range cps {
		c := &cps[i]
		if c.Parent == "" || !known[c.Parent] {
			roots = append(roots, c)
		} else {
			children[c.Parent] = append(children[c.Parent], c)
		}
	}
	byLatest := func(a, b *snapshot.Checkpoint) int {
		if c := latest[a.ID].Compare(latest[b.ID]); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	}
	slices.SortFunc(roots, byLatest)
	for _, kids := range children {
		slices.SortFunc(kids, byLatest)
	}
	pre := make([]*snapshot.Checkpoint, 0, len(cps))
	// An explicit stack: a long linear history would otherwise recurse once per checkpoint.
	stack := make([]*snapshot.Checkpoint, 0, len(roots))
	for i := len(roots) - 1; i >= 0; i-- {
		stack = append(stack, roots[i])
	}
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		pre = append(pre, c)
		kids := children[c.ID]
		for i := len(kids) - 1; i >= 0; i-- {
			stack = append(stack, kids[i])
		}
	}
	for i, j := 0, len(pre)-1; i < j; i, j = i+1, j-1 {
		pre[i], pre[j] = pre[j], pre[i]
	}
	return pre
}

// describeCheckpoint is a checkpoint's text in the graph: id, time, kind, label, counts.
func describeCheckpoint(c *snapshot.Checkpoint, current string, known, older map[string]bool, loc *time.Location) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %s  ", c.ID, c.Time.In(loc).Format(timeFormat))
	if c.Kind == snapshot.KindSafety {
		b.WriteString("[safety] ")
	}
	if c.Label != "" {
		b.WriteString(printable(c.Label))
		b.WriteString("  ")
	}
	fmt.Fprintf(&b, "(%s, %s)", plural(c.Counts.Files, "file", "files"), byteSize(c.Counts.Bytes))
	switch {
	case c.Parent == "" || known[c.Parent]:
	case older[c.Parent]:
		fmt.Fprintf(&b, "  parent %s on an older page", c.Parent)
	default:
		fmt.Fprintf(&b, "  parent %s removed by gc", c.Parent)
	}
	if c.ID == current {
		b.WriteString("  <- current")
	}
	return b.String()
}
