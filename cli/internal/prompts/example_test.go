package prompts_test

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/agent-rewind/rewind/cli/internal/prompts"
	"github.com/agent-rewind/rewind/snapshot"
)

// Two prompts of one session, and the calls made for each, grouped as list shows them.
func Example() {
	dir, _ := os.MkdirTemp("", "prompts-example")
	defer os.RemoveAll(dir)
	log := filepath.Join(dir, prompts.File)
	t0 := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	prompts.Append(log, prompts.Prompt{Session: "s1", Agent: "claude-code", Text: "Add a login page, key sk-ant-api03-abcdefghijkl", Time: t0})
	prompts.Append(log, prompts.Prompt{Session: "s1", Agent: "claude-code", Text: "Now the logout", Time: t0.Add(time.Minute)})
	ps, _ := prompts.Read(log)
	calls := []snapshot.CallRecord{
		{ToolCall: snapshot.ToolCall{ID: "toolu_1", Tool: "Write", Session: "s1"}, Checkpoint: "aaaaaaaaaaaa", Time: t0.Add(time.Second)},
		{ToolCall: snapshot.ToolCall{ID: "toolu_2", Tool: "Bash", Session: "s1"}, Checkpoint: "bbbbbbbbbbbb", Time: t0.Add(2 * time.Second)},
		{ToolCall: snapshot.ToolCall{ID: "toolu_3", Tool: "Edit", Session: "s1"}, Checkpoint: "cccccccccccc", Time: t0.Add(61 * time.Second)},
	}
	for _, sg := range prompts.GroupCalls(ps, []snapshot.Session{{ID: "s1", Agent: "claude-code", Calls: calls}}) {
		for _, g := range sg.Groups {
			fmt.Printf("prompt %d %q → %d tool calls\n", g.N, g.Prompt.Text, len(g.Calls))
		}
	}
	_, first, _ := prompts.FirstCall(ps, []snapshot.Session{{ID: "s1", Calls: calls}}, 2)
	fmt.Println("rewind prompt:2 goes back to", first.Checkpoint)
	// Output:
	// prompt 1 "Add a login page, key sk-***" → 2 tool calls
	// prompt 2 "Now the logout" → 1 tool calls
	// rewind prompt:2 goes back to cccccccccccc
}
