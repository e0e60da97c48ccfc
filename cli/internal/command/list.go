package command

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/agent-rewind/rewind/cli/internal/prompts"
	"github.com/agent-rewind/rewind/snapshot"
)

// ListCmd prints the timeline.
type ListCmd struct {
	Graph  bool   `help:"Draw the timeline as a graph even when stdout is not a terminal (it is drawn on a terminal anyway)."`
	Limit  int    `help:"Show at most this many checkpoints, the newest first (0, the default, shows all); the rest is a page away (see --before)." placeholder:"N"`
	Before string `help:"Show only the checkpoints older than this one: the next page, as the previous page names it." placeholder:"ID"`
}

// listPage is list's JSON: the timeline, cut to the page asked for. Next is the id to
// pass to --before for the older checkpoints not shown ("" on the last page).
type listPage struct {
	*snapshot.Timeline
	Next string `json:"next"`
	// Prompts groups each session's calls by the prompt that led to them, where the client's
	// prompt hook logged prompts (cli/internal/prompts); absent when none was logged.
	Prompts []prompts.SessionGroups `json:"prompts,omitempty"`
}

// Run lists. It takes no lock and writes nothing (except finishing an interrupted rewind, as
// every command does).
func (c *ListCmd) Run(env *Env) error {
	if c.Limit < 0 {
		return fmt.Errorf("--limit %d: give how many checkpoints to show, 1 or more (0 shows all)", c.Limit)
	}
	s, err := openSnapshots(env, false)
	if err != nil {
		return err
	}
	defer s.close()
	tl, err := s.store.List()
	var before string
	if err == nil && c.Before != "" {
		before, err = s.store.Resolve(c.Before)
	}
	var ps []prompts.Prompt
	if err == nil {
		ps, err = prompts.Read(s.ws.Path(prompts.File))
	}
	s.done()
	if err != nil {
		return err
	}
	if tl.Checkpoints == nil {
		tl.Checkpoints = []snapshot.Checkpoint{}
	}
	page := cutPage(tl, before, c.Limit)
	if len(ps) > 0 {
		page.Prompts = prompts.GroupCalls(ps, tl.Sessions)
	}
	return env.Emit(page, func(w io.Writer) error {
		if len(tl.Checkpoints) == 0 {
			_, err := fmt.Fprintln(w, `no checkpoints yet: make one with "agent-rewind checkpoint [label]"`)
			writeSessions(w, tl.Sessions, page.Prompts) // prompts logged before any checkpoint
			return err
		}
		if c.Graph || isTerminal(env.Stdout) {
			older := make(map[string]bool)
			for _, c := range tl.Checkpoints {
				older[c.ID] = true
			}
			for _, c := range page.Checkpoints {
				delete(older, c.ID)
			}
			for _, line := range renderPage(page.Timeline, older, time.Local) {
				fmt.Fprintln(w, line)
			}
		} else {
			writeTimeline(w, page.Timeline)
		}
		if page.Next != "" {
			fmt.Fprintf(w, "older checkpoints not shown: agent-rewind list --before %s", page.Next)
			if c.Limit > 0 {
				fmt.Fprintf(w, " --limit %d", c.Limit)
			}
			fmt.Fprintln(w)
		}
		writeSessions(w, tl.Sessions, page.Prompts)
		writePosition(w, tl)
		return nil
	})
}

// cutPage returns the checkpoints of tl older than before (all when before is ""), the newest
// limit of them (all when limit is 0). The position and the last operation stay whole: they
// describe the workspace, not the page.
func cutPage(tl *snapshot.Timeline, before string, limit int) listPage {
	cps := tl.Checkpoints
	if before != "" {
		if i := slices.IndexFunc(cps, func(c snapshot.Checkpoint) bool { return c.ID == before }); i >= 0 {
			cps = cps[:i]
		}
	}
	page := listPage{Timeline: &snapshot.Timeline{Current: tl.Current, Last: tl.Last, Sessions: tl.Sessions}}
	if limit > 0 && len(cps) > limit {
		cps = cps[len(cps)-limit:]
		page.Next = cps[0].ID
	}
	page.Checkpoints = slices.Clip(cps)
	return page
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
// first, with the checkpoint that holds the state before each; under the prompt that led to
// them where the session's prompts were logged (groups), which also name the sessions whose
// prompts were logged but no calls (Gemini CLI's).
func writeSessions(w io.Writer, sessions []snapshot.Session, groups []prompts.SessionGroups) {
	byPrompt := map[string][]prompts.Group{}
	known := map[string]bool{}
	for _, s := range sessions {
		known[s.ID] = true
	}
	for _, g := range groups {
		if len(g.Groups) > 1 || len(g.Groups) == 1 && g.Groups[0].N > 0 {
			byPrompt[g.Session] = g.Groups
		}
		if !known[g.Session] {
			known[g.Session] = true
			sessions = append(slices.Clip(sessions), snapshot.Session{ID: g.Session, Agent: g.Agent})
		}
	}
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
		gs, ok := byPrompt[s.ID]
		if !ok {
			writeCalls(w, "    ", s.Calls)
			continue
		}
		for _, g := range gs {
			if g.Prompt == nil {
				fmt.Fprintf(w, "    before any prompt logged: %s\n", plural(len(g.Calls), "tool call", "tool calls"))
			} else {
				fmt.Fprintf(w, "    prompt %d %q → %s (agent-rewind rewind prompt:%d)\n", g.N, g.Prompt.Text, plural(len(g.Calls), "tool call", "tool calls"), g.N)
			}
			writeCalls(w, "      ", g.Calls)
		}
	}
}

// writeCalls prints calls, the newest shownCalls of them, indented.
func writeCalls(w io.Writer, indent string, calls []snapshot.CallRecord) {
	if len(calls) > shownCalls {
		fmt.Fprintf(w, "%s%s earlier (see --json)\n", indent, count(len(calls)-shownCalls))
		calls = calls[len(calls)-shownCalls:]
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range calls {
		before := "before: " + c.Checkpoint
		if c.Reused {
			before += " (unchanged since)"
		}
		fmt.Fprintf(tw, "%s%s\t%s\t%s\t%s\t%s\n", indent, printable(c.ID), localTime(c.Time), printable(c.Tool), printable(c.Summary), before)
	}
	tw.Flush()
}

// writePosition says where the workspace is and how to undo the last rewind or replay.
func writePosition(w io.Writer, tl *snapshot.Timeline) {
	if tl.Current == "" {
		fmt.Fprintln(w, "no current position (the last checkpoint was removed)")
	} else {
		fmt.Fprintf(w, "@ current position: %s\n", tl.Current)
	}
	if l := tl.Last; l != nil {
		fmt.Fprintf(w, "last %s: %s, %s", l.Op, localTime(l.Time), describeLast(l))
		if undo := undoLast(tl); undo != "" {
			fmt.Fprintf(w, " (undo: %s)", undo)
		}
		fmt.Fprintln(w)
	}
}

// describeLast says what the last rewind or replay did in terms of checkpoints. The position it
// started from is not always the state it left: when the workspace had changed since, the state
// left is the safety checkpoint, and a rewind to the position it had drifted from would otherwise
// read "from X to X", like a no-op.
func describeLast(l *snapshot.Operation) string {
	switch {
	case l.Safety == "" || l.Safety == l.From:
		return fmt.Sprintf("from %s to %s", l.From, l.To)
	case l.From == l.To:
		return fmt.Sprintf("back to %s, undoing the changes made since it; they are kept as safety checkpoint %s", l.To, l.Safety)
	case l.From == "":
		return fmt.Sprintf("to %s; the state it left is safety checkpoint %s", l.To, l.Safety)
	default:
		return fmt.Sprintf("from safety checkpoint %s (the state it left, changed since %s) to %s", l.Safety, l.From, l.To)
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
