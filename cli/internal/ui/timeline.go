package ui

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/agent-rewind/rewind/cli/internal/prompts"
	"github.com/agent-rewind/rewind/cli/internal/workspace"
	"github.com/agent-rewind/rewind/gateway"
	"github.com/agent-rewind/rewind/snapshot"
)

// Step is one checkpoint as the timeline shows it.
type Step struct {
	ID      string          `json:"id"`
	Time    time.Time       `json:"time"`
	Kind    string          `json:"kind"` // "manual", "safety", or the store's kind of an automatic one
	Label   string          `json:"label"`
	Parent  string          `json:"parent,omitempty"`
	Lane    int             `json:"lane"` // column in the graph: a branch per rewind that was built on
	Counts  snapshot.Counts `json:"counts"`
	Change  *Change         `json:"change"` // since the parent (everything, for the first); null past maxSized
	Session string          `json:"session,omitempty"`
	Tool    string          `json:"tool,omitempty"`
	// Prompt is the person's prompt that led to the call an automatic checkpoint was taken
	// before, and its number (rewind prompt:N), where the client's prompt hook logged it: the
	// page folds a session's steps by it (Group.Prompts).
	Prompt  string `json:"prompt,omitempty"`
	PromptN int    `json:"promptN,omitempty"`
}

// Change counts the paths that differ from the parent by kind.
type Change struct {
	Added    int `json:"added"`
	Modified int `json:"modified"`
	Deleted  int `json:"deleted"`
	Other    int `json:"other"` // mode and type changes
}

// Group is a run of consecutive automatic checkpoints of one agent session: the timeline folds
// it under one row, and within it each prompt's steps under a row of their own.
type Group struct {
	Session string       `json:"session"`
	Steps   []string     `json:"steps"` // ids, oldest first
	Tools   []string     `json:"tools"` // tool calls, in order
	Prompts []PromptFold `json:"prompts"`
}

// PromptFold is a run of a Group's steps taken for one prompt ("Add a login page" → 7 tool
// calls); steps of no logged prompt are in none.
type PromptFold struct {
	N     int      `json:"n"` // rewind prompt:N
	Text  string   `json:"text"`
	Steps []string `json:"steps"` // ids, oldest first
	Tools []string `json:"tools"`
}

// Timeline is the page's view of the store.
type Timeline struct {
	Steps   []Step              `json:"steps"` // oldest first
	Lanes   int                 `json:"lanes"`
	Groups  []Group             `json:"groups"`
	Current string              `json:"current"`
	Last    *snapshot.Operation `json:"last,omitempty"`
}

// origin names the agent session and the tool call of an automatic checkpoint (its Call):
// "Bash toolu_01…", so that the page groups a session's steps and names each call; a checkpoint
// someone asked for has neither.
func origin(c snapshot.Checkpoint) (session, tool string) {
	if c.Call == nil {
		return "", ""
	}
	return c.Call.Session, c.Call.Tool + " " + c.Call.ID
}

func kindName(k snapshot.Kind) string {
	if k == snapshot.KindNormal {
		return "manual"
	}
	return string(k)
}

func (s *Server) timeline(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tl, err := s.store.List()
	if err != nil {
		fail(w, err)
		return
	}
	ps, err := prompts.Read(s.ws.Path(prompts.File))
	if err != nil {
		fail(w, err)
		return
	}
	// The prompt of each checkpoint taken before a call (a call noted against an existing
	// checkpoint took none of its own).
	promptOf := map[string]prompts.Group{}
	for _, sg := range prompts.GroupCalls(ps, tl.Sessions) {
		for _, g := range sg.Groups {
			for _, call := range g.Calls {
				if g.Prompt != nil && !call.Reused {
					promptOf[call.Checkpoint] = g
				}
			}
		}
	}
	out := Timeline{Current: tl.Current, Last: tl.Last, Steps: []Step{}}
	for i, c := range tl.Checkpoints {
		st := Step{ID: c.ID, Time: c.Time, Kind: kindName(c.Kind), Label: c.Label, Parent: c.Parent, Counts: c.Counts}
		st.Session, st.Tool = origin(c)
		if g, ok := promptOf[c.ID]; ok {
			st.Prompt, st.PromptN = g.Prompt.Text, g.N
		}
		if len(tl.Checkpoints)-i <= maxSized {
			ch := s.changeOf(r.Context(), c)
			st.Change = &ch
		}
		out.Steps = append(out.Steps, st)
	}
	out.Lanes = assignLanes(out.Steps)
	out.Groups = groupSteps(out.Steps)
	writeJSON(w, out)
}

// maxSized is how many of the newest checkpoints show their size of change: each costs reading
// two manifests once (then cached), which a long history must not pay all at once.
var maxSized = 300 // a variable for tests

// changeOf counts what checkpoint c changed from its parent, cached (checkpoints never change).
func (s *Server) changeOf(ctx context.Context, c snapshot.Checkpoint) Change {
	if c.Parent == "" {
		return Change{Added: c.Counts.Files + c.Counts.Dirs + c.Counts.Symlinks}
	}
	d, ok := s.sizes[c.ID]
	if !ok {
		var err error
		if d, err = s.store.Diff(ctx, c.Parent, c.ID); err != nil {
			return Change{} // the parent was removed by gc: nothing to compare with
		}
		s.sizes[c.ID] = d
	}
	var ch Change
	for _, x := range d.Changes {
		switch x.Kind {
		case snapshot.ChangeAdded:
			ch.Added++
		case snapshot.ChangeModified:
			ch.Modified++
		case snapshot.ChangeDeleted:
			ch.Deleted++
		default:
			ch.Other++
		}
	}
	return ch
}

// assignLanes gives each step a column: a step continues its parent's lane when it is the
// parent's first child, and opens a new lane otherwise (a branch: work after a rewind). It
// returns the number of lanes.
func assignLanes(steps []Step) int {
	lane := map[string]int{}
	tip := map[int]string{} // lane -> its newest step
	lanes := 0
	for i := range steps {
		st := &steps[i]
		l, ok := lane[st.Parent]
		if !ok || tip[l] != st.Parent {
			l = lanes
			lanes++
		}
		st.Lane, lane[st.ID], tip[l] = l, l, st.ID
	}
	return lanes
}

// groupSteps folds consecutive steps of one agent session into a group.
func groupSteps(steps []Step) []Group {
	gs := []Group{}
	for _, st := range steps {
		if st.Session == "" {
			continue
		}
		if n := len(gs); n > 0 && gs[n-1].Session == st.Session && gs[n-1].Steps[len(gs[n-1].Steps)-1] == st.Parent {
			gs[n-1].Steps = append(gs[n-1].Steps, st.ID)
			gs[n-1].Tools = append(gs[n-1].Tools, st.Tool)
			continue
		}
		gs = append(gs, Group{Session: st.Session, Steps: []string{st.ID}, Tools: []string{st.Tool}})
	}
	byID := map[string]*Step{}
	for i := range steps {
		byID[steps[i].ID] = &steps[i]
	}
	for i := range gs {
		g := &gs[i]
		g.Prompts = []PromptFold{}
		for j, id := range g.Steps {
			st := byID[id]
			switch n := len(g.Prompts); {
			case st.PromptN == 0:
			case n > 0 && g.Prompts[n-1].N == st.PromptN && j > 0 && byID[g.Steps[j-1]].PromptN == st.PromptN:
				g.Prompts[n-1].Steps = append(g.Prompts[n-1].Steps, id)
				g.Prompts[n-1].Tools = append(g.Prompts[n-1].Tools, st.Tool)
			default:
				g.Prompts = append(g.Prompts, PromptFold{N: st.PromptN, Text: st.Prompt, Steps: []string{id}, Tools: []string{st.Tool}})
			}
		}
	}
	return gs
}

// version answers a short fingerprint of everything the page shows (the checkpoints, the
// position, the chain, the ledger, the receipt), from stats alone: the page polls it and
// reloads its data when it changes, so it follows an agent's work without a reload.
func (s *Server) version(w http.ResponseWriter, r *http.Request) {
	h := sha256.New()
	for _, p := range []string{"checkpoints", "position", workspace.ChainFile, workspace.EffectsDir, gateway.SavingsFileName, prompts.File} {
		if fi, err := os.Stat(s.ws.Path(p)); err == nil {
			fmt.Fprintf(h, "%s %d %d\n", p, fi.Size(), fi.ModTime().UnixNano())
		}
	}
	if ents, err := os.ReadDir(s.ws.Path(workspace.EffectsDir)); err == nil {
		for _, e := range ents {
			if fi, err := e.Info(); err == nil {
				fmt.Fprintf(h, "%s %d %d\n", e.Name(), fi.Size(), fi.ModTime().UnixNano())
			}
		}
	}
	writeJSON(w, map[string]string{"version": hex.EncodeToString(h.Sum(nil))[:16]})
}
