package command

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/agent-rewind/rewind/snapshot"
)

// ListCmd prints the timeline.
type ListCmd struct {
	Graph bool `help:"Draw the timeline as a graph even when stdout is not a terminal (it is drawn on a terminal anyway)."`
}

// Run lists. It takes no lock and writes nothing (except finishing an interrupted rewind, as
// every command does).
func (c *ListCmd) Run(env *Env) error {
	s, err := openSnapshots(env, false)
	if err != nil {
		return err
	}
	defer s.close()
	tl, err := s.store.List()
	s.done()
	if err != nil {
		return err
	}
	if tl.Checkpoints == nil {
		tl.Checkpoints = []snapshot.Checkpoint{}
	}
	return env.Emit(tl, func(w io.Writer) error {
		if len(tl.Checkpoints) == 0 {
			_, err := fmt.Fprintln(w, `no checkpoints yet: make one with "agent-rewind checkpoint [label]"`)
			return err
		}
		if c.Graph || isTerminal(env.Stdout) {
			for _, line := range renderGraph(tl, time.Local) {
				fmt.Fprintln(w, line)
			}
		} else {
			writeTimeline(w, tl)
		}
		writeSessions(w, tl.Sessions)
		writePosition(w, tl)
		return nil
	})
}

// writeTimeline prints the timeline as plain lines, newest first, "@" marking the current
// position.
func writeTimeline(w io.Writer, tl *snapshot.Timeline) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\tID\tTIME\tKIND\tPARENT\tFILES\tSIZE\tLABEL")
	for _, c := range slices.Backward(tl.Checkpoints) {
		mark, parent := "", c.Parent
		if c.ID == tl.Current {
			mark = "@"
		}
		if parent == "" {
			parent = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", mark, c.ID, localTime(c.Time), c.Kind, parent,
			count(c.Counts.Files), byteSize(c.Counts.Bytes), printable(c.Label))
	}
	tw.Flush()
}

// shownCalls is how many tool calls of each session list prints in text; --json has them all.
const shownCalls = 20

// writeSessions prints the tool calls that had automatic checkpoints, by agent session, oldest
// first, with the checkpoint that holds the state before each.
func writeSessions(w io.Writer, sessions []snapshot.Session) {
	if len(sessions) == 0 {
		return
	}
	fmt.Fprintln(w, "tool calls by agent session (agent-rewind rewind <tool call id> restores the state before the call):")
	for _, s := range sessions {
		name := s.ID
		if name == "" {
			name = "(unnamed)"
		}
		if s.Agent != "" {
			name += " (" + s.Agent + ")"
		}
		fmt.Fprintf(w, "  session %s, %s:\n", printable(name), plural(len(s.Calls), "call", "calls"))
		calls := s.Calls
		if len(calls) > shownCalls {
			fmt.Fprintf(w, "    %s earlier (see --json)\n", count(len(calls)-shownCalls))
			calls = calls[len(calls)-shownCalls:]
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, c := range calls {
			before := "before: " + c.Checkpoint
			if c.Reused {
				before += " (unchanged since)"
			}
			fmt.Fprintf(tw, "    %s\t%s\t%s\t%s\t%s\n", printable(c.ID), localTime(c.Time), printable(c.Tool), printable(c.Summary), before)
		}
		tw.Flush()
	}
}

// writePosition says where the workspace is and how to undo the last rewind or replay.
func writePosition(w io.Writer, tl *snapshot.Timeline) {
	if tl.Current == "" {
		fmt.Fprintln(w, "no current position (the last checkpoint was removed)")
	} else {
		fmt.Fprintf(w, "@ current position: %s\n", tl.Current)
	}
	if l := tl.Last; l != nil {
		fmt.Fprintf(w, "last %s: %s, from %s to %s; the state before it is safety checkpoint %s", l.Op, localTime(l.Time), l.From, l.To, l.Safety)
		if undo := undoLast(tl); undo != "" {
			fmt.Fprintf(w, " (%s)", undo)
		}
		fmt.Fprintln(w)
	}
}

// undoLast returns the command that goes back to the last rewind's safety checkpoint from the
// current position: replay when it is later, rewind otherwise; "" when the workspace is there.
func undoLast(tl *snapshot.Timeline) string {
	if tl.Last == nil || tl.Last.Safety == tl.Current {
		return ""
	}
	var cur, safety *snapshot.Checkpoint
	for i := range tl.Checkpoints {
		switch tl.Checkpoints[i].ID {
		case tl.Current:
			cur = &tl.Checkpoints[i]
		case tl.Last.Safety:
			safety = &tl.Checkpoints[i]
		}
	}
	if safety == nil {
		return ""
	}
	if cur == nil || safety.Time.After(cur.Time) {
		return "agent-rewind replay " + safety.ID
	}
	return "agent-rewind rewind " + safety.ID
}
