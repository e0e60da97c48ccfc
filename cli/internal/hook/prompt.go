package hook

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/agent-rewind/rewind/barrier"
	"github.com/agent-rewind/rewind/cli/internal/prompts"
)

// The prompt hooks (Claude Code's and Codex CLI's UserPromptSubmit, Gemini CLI's BeforeAgent:
// barrier.RolePrompt)
// run the guard like the tool hooks, so they reach the same workspace by the same rule; the
// guard logs the prompt (cli/internal/prompts) and never blocks it: whatever goes wrong, it
// exits 0 with nothing on stdout (which these clients would add to the model's context), and
// says what went wrong on stderr.

// promptOf returns the prompt a prompt hook's input carries, and whether raw is one.
func promptOf(in barrier.Input, raw []byte) (prompts.Prompt, bool) {
	if c := in.Client(); c == nil || c.Role(in.Event) != barrier.RolePrompt {
		return prompts.Prompt{}, false // every tool call's hook passes here: no second parse
	}
	var p struct {
		Session string `json:"session_id"`
		Turn    string `json:"turn_id"`
		Prompt  string `json:"prompt"`
		Path    string `json:"transcript_path"`
	}
	json.Unmarshal(raw, &p) // what does not parse is logged empty: the prompt still goes on
	return prompts.Prompt{Session: p.Session, Agent: string(in.Agent), Turn: p.Turn, Text: p.Prompt, Time: time.Now().UTC(), Transcript: p.Path}, true
}

// logPrompt appends p to the workspace's prompt log, making the store on a session's first
// prompt (the calls that follow are checkpointed into it). It always returns 0: a prompt hook
// must never block a prompt.
func (g *guardRun) logPrompt(p prompts.Prompt, werr error, stderr io.Writer) int {
	if werr != nil {
		fmt.Fprintf(stderr, "agent-rewind: prompt not logged: %v\n", werr)
		return 0
	}
	ws, err := g.workspace(true)
	if err == nil {
		err = prompts.Append(ws.Path(prompts.File), p)
	}
	if err != nil {
		fmt.Fprintf(stderr, "agent-rewind: prompt not logged (the prompt goes on): %v\n", err)
	}
	if ws != nil {
		g.warmIfDue(ws)
	}
	return 0
}
