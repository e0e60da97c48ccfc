package barrier_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/agent-rewind/rewind/barrier"
)

// printRecorder stands in for the hash chain: it prints each entry and numbers it.
type printRecorder struct{ seq int64 }

func (p *printRecorder) Record(kind string, data any) (int64, error) {
	p.seq++
	fmt.Printf("chain entry %d: %s\n", p.seq, kind)
	return p.seq, nil
}

// A guard run for a Claude Code PreToolUse hook: the first `git push` is admitted (pending until
// PostToolUse), and the same push after a rewind is refused, with the reason on stderr and exit
// code 2.
func Example() {
	dir, _ := os.MkdirTemp("", "barrier-example")
	defer os.RemoveAll(dir)
	ledger, _ := barrier.Open(filepath.Join(dir, ".rewind", "effects"), &printRecorder{})
	ledger.Now = func() time.Time { return time.Date(2026, 5, 2, 10, 0, 0, 0, time.UTC) }

	g := &barrier.Guard{
		Rules:      barrier.DefaultRules(),
		OpenLedger: func() (*barrier.Ledger, error) { return ledger, nil },
		Checkpoint: func() (string, error) { return "cp-7", nil },
	}
	hook := func(event, id string) []byte {
		b, _ := json.Marshal(map[string]any{
			"session_id": "abc123", "cwd": "/work", "hook_event_name": event,
			"tool_name": "Bash", "tool_use_id": id,
			"tool_input": map[string]string{"command": "git push origin main"},
		})
		return b
	}

	o := g.Handle(hook("PreToolUse", "toolu_1"))
	fmt.Println(o.Decision.Code, o.Decision.State, o.Decision.Key, "exit", o.Answer.ExitCode)
	o = g.Handle(hook("PostToolUse", "toolu_1"))
	fmt.Println(o.Decision.Code, o.Decision.State)
	o = g.Handle(hook("PreToolUse", "toolu_2"))
	fmt.Println(o.Decision.Code, "exit", o.Answer.ExitCode)
	fmt.Print(o.Answer.Stderr)
	o = g.Handle(nil) // empty input: unreadable, so refused rather than let through
	fmt.Println("exit", o.Answer.ExitCode)

	// Output:
	// chain entry 1: effect
	// admitted pending shell:36574794d0b7d41dee4745253614802e exit 0
	// chain entry 2: confirm
	// confirmed spent
	// chain entry 3: refusal
	// spent exit 2
	// agent-rewind refused effect shell:36574794d0b7d41dee4745253614802e (git push origin main): it already fired at 2026-05-02T10:00:00Z (chain entry 1), while checkpoint cp-7 was current. Rewinding the workspace does not undo external effects, so running it again would repeat it in the outside world. Do not retry it. Only if a distinct new effect is really intended, use a new key (prefix the command with REWIND_EFFECT_KEY=<new-key>, a name for this distinct effect, e.g. REWIND_EFFECT_KEY=release-v2 git push); if unsure, ask the user.
	// exit 2
}

// Classifying a call is pure: no ledger, no I/O.
func ExampleRules_Classify() {
	rules := barrier.DefaultRules()
	for _, cmd := range []string{
		"go test ./... && git status",
		"cd app && sudo -E /usr/bin/npm publish --access public",
		"kubectl --context prod apply -f deploy.yaml",
		"curl -sS https://example.com/health",
	} {
		ti, _ := json.Marshal(map[string]string{"command": cmd})
		m := rules.Classify(barrier.Input{Agent: barrier.AgentClaudeCode, Event: barrier.EventPreToolUse, ToolName: "Bash", ToolInput: ti})
		if m == nil {
			fmt.Printf("%-58s not an effect\n", cmd)
			continue
		}
		fmt.Printf("%-58s %s %q\n", cmd, m.Rule, m.Commands)
	}
	// Output:
	// go test ./... && git status                                not an effect
	// cd app && sudo -E /usr/bin/npm publish --access public     package-publish [["npm" "publish" "--access" "public"]]
	// kubectl --context prod apply -f deploy.yaml                kubectl-mutate [["kubectl" "--context" "prod" "apply" "-f" "deploy.yaml"]]
	// curl -sS https://example.com/health                        not an effect
}
