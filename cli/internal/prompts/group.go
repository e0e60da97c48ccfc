package prompts

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/agent-rewind/rewind/snapshot"
)

// Group is one prompt and the tool calls made for it that had automatic checkpoints.
type Group struct {
	N      int                   `json:"n"` // the prompt's number in the log, from 1; 0 for calls before any prompt logged
	Prompt *Prompt               `json:"prompt,omitempty"`
	Calls  []snapshot.CallRecord `json:"calls"`
}

// SessionGroups is one session's calls grouped by prompt.
type SessionGroups struct {
	Session string  `json:"session"`
	Agent   string  `json:"agent,omitempty"`
	Groups  []Group `json:"groups"`
}

// GroupCalls groups each session's calls under the latest prompt of the same session logged
// before the call; calls before any (a session started before the prompt hook was set up)
// are a group of their own, N 0. Prompts without calls are groups too: they show that a
// prompt changed nothing; a session with prompts and no calls (a client whose hooks name no
// tool call, such as Gemini CLI, takes no automatic checkpoints) comes after the others.
func GroupCalls(ps []Prompt, sessions []snapshot.Session) []SessionGroups {
	number(ps) // a no-op on Read's
	var out []SessionGroups
	seen := map[string]bool{}
	for _, s := range sessions {
		seen[s.ID] = true
	}
	for _, p := range ps {
		if !seen[p.Session] {
			seen[p.Session] = true
			sessions = append(slices.Clip(sessions), snapshot.Session{ID: p.Session, Agent: p.Agent})
		}
	}
	for _, s := range sessions {
		sg := SessionGroups{Session: s.ID, Agent: s.Agent}
		var at []int // indexes into sg.Groups of this session's prompts, in order
		for i := range ps {
			if ps[i].Session == s.ID {
				sg.Groups = append(sg.Groups, Group{N: ps[i].N, Prompt: &ps[i]})
				at = append(at, len(sg.Groups)-1)
			}
		}
		var early []snapshot.CallRecord
		for _, c := range s.Calls {
			g := -1
			for _, i := range at {
				if !sg.Groups[i].Prompt.Time.After(c.Time) {
					g = i
				}
			}
			if g < 0 {
				early = append(early, c)
				continue
			}
			sg.Groups[g].Calls = append(sg.Groups[g].Calls, c)
		}
		if len(early) > 0 {
			sg.Groups = append([]Group{{Calls: early}}, sg.Groups...)
		}
		for i := range sg.Groups {
			if sg.Groups[i].Calls == nil {
				sg.Groups[i].Calls = []snapshot.CallRecord{}
			}
		}
		out = append(out, sg)
	}
	return out
}

// Ref is how a rewind names a prompt: "prompt:N".
const Ref = "prompt:"

// ParseRef returns N of "prompt:N", and whether ref has that form.
func ParseRef(ref string) (int, bool, error) {
	rest, ok := strings.CutPrefix(ref, Ref)
	if !ok {
		return 0, false, nil
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 1 {
		return 0, true, fmt.Errorf("%q: give prompt:N with N a prompt's number as agent-rewind list shows it (1 or more)", ref)
	}
	return n, true, nil
}

// FirstCall returns the first tool call made for prompt n (numbered as in GroupCalls), that
// is the state just before the prompt's work; an error names why there is none.
func FirstCall(ps []Prompt, sessions []snapshot.Session, n int) (*Prompt, snapshot.CallRecord, error) {
	number(ps)
	i := slices.IndexFunc(ps, func(p Prompt) bool { return p.N == n })
	if i < 0 {
		held := "none"
		if len(ps) > 0 {
			held = fmt.Sprintf("%d to %d", ps[0].N, ps[len(ps)-1].N)
		}
		return nil, snapshot.CallRecord{}, fmt.Errorf("no prompt %d: the prompt log holds prompts %s (see agent-rewind list; gc removes the prompts whose checkpoints are gone)", n, held)
	}
	for _, sg := range GroupCalls(ps, sessions) {
		for _, g := range sg.Groups {
			if g.N != n {
				continue
			}
			if len(g.Calls) == 0 {
				return g.Prompt, snapshot.CallRecord{}, fmt.Errorf("prompt %d (%q) led to no tool call with an automatic checkpoint: nothing it did can be rewound; the prompt before it can", n, g.Prompt.Text)
			}
			return g.Prompt, g.Calls[0], nil
		}
	}
	p := &ps[i]
	return p, snapshot.CallRecord{}, fmt.Errorf("prompt %d (%q) led to no tool call with an automatic checkpoint (or gc removed them)", n, p.Text)
}
