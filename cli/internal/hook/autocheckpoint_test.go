package hook

import (
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/barrier"
)

func TestAutoCall(t *testing.T) {
	for _, c := range []struct {
		in            string
		ok            bool
		tool, summary string
	}{
		{`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"npm   install\nx"},"tool_use_id":"t1","session_id":"s"}`, true, "Bash", "npm   install\nx"},
		{`{"hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":"/p/a.go"},"tool_use_id":"t1"}`, true, "Edit", "/p/a.go"},
		{`{"hook_event_name":"PreToolUse","tool_name":"NotebookEdit","tool_input":{"notebook_path":"/p/n.ipynb"},"tool_use_id":"t1"}`, true, "NotebookEdit", "/p/n.ipynb"},
		{`{"hook_event_name":"PreToolUse","tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n*** Add File: x.md\n+hi\n"},"tool_use_id":"c1","turn_id":"u"}`, true, "apply_patch", "x.md"},
		{`{"hook_event_name":"PreToolUse","tool_name":"mcp__github__create_issue","tool_input":{},"tool_use_id":"t1"}`, true, "mcp__github__create_issue", ""},
		{`{"hook_event_name":"PreToolUse","tool_name":"mcp__plugin_agent-rewind_agent-rewind__checkpoint","tool_input":{},"tool_use_id":"t1"}`, false, "", ""},
		{`{"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/p/a.go"},"tool_use_id":"t1"}`, false, "", ""},
		{`{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t1"}`, false, "", ""},
		{`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`, false, "", ""}, // no call id
		// agent-rewind's own tools, by server and tool, however the client names them.
		{`{"hook_event_name":"PreToolUse","tool_name":"mcp__agent-rewind__checkpoint","tool_input":{},"tool_use_id":"t1"}`, false, "", ""},
		{`{"hook_event_name":"PreToolUse","tool_name":"mcp__agent_rewind__checkpoint","tool_input":{},"tool_use_id":"c1","turn_id":"u"}`, false, "", ""},
		{`{"hookName":"tool_call","taskId":"t","tool_call":{"id":"call_1","name":"agent-rewind__rewind","input":{"id":"x"}}}`, false, "", ""},
		{`{"hook_event_name":"PreToolUse","tool_name":"mcp__agent-rewind__deploy","tool_input":{},"tool_use_id":"t1"}`, true, "mcp__agent-rewind__deploy", ""},                       // not one of its tools
		{`{"hook_event_name":"PreToolUse","tool_name":"mcp__my-agent-rewind__checkpoint","tool_input":{},"tool_use_id":"t1"}`, true, "mcp__my-agent-rewind__checkpoint", ""},         // another server
		{`{"hook_event_name":"PreToolUse","tool_name":"mcp__agent-rewind__checkpoint","tool_input":{},"tool_use_id":"c1","turn_id":"u"}`, true, "mcp__agent-rewind__checkpoint", ""}, // Codex would write agent_rewind
		// Cline's CLI names its calls; its MCP tools are <server>__<tool>.
		{`{"hookName":"tool_call","taskId":"t","tool_call":{"id":"call_2","name":"slack__post_message","input":{}}}`, true, "mcp__slack__post_message", ""},
		{`{"hookName":"tool_call","taskId":"t","tool_call":{"id":"call_3","name":"editor","input":{"path":"/p/a.go","new_text":"x"}}}`, true, "editor", "/p/a.go"},
		{`{"hookName":"tool_call","taskId":"t","tool_call":{"id":"call_4","name":"apply_patch","input":{"input":"*** Begin Patch\n*** Update File: b.go\n"}}}`, true, "apply_patch", "b.go"},
		{`{"hookName":"tool_call","taskId":"t","tool_call":{"id":"call_5","name":"run_commands","input":{"commands":["npm install","make"]}}}`, true, "run_commands", "npm install\nmake"},
		{`{"hookName":"tool_call","taskId":"t","tool_call":{"id":"call_6","name":"read_files","input":{"files":[{"path":"/p/a.go"}]}}}`, false, "", ""},
		// Clients that name no call: no automatic checkpoint (Copilot), or one named by
		// agent-rewind (Gemini CLI, one BeforeTool per call).
		{`{"hook_event_name":"PreToolUse","timestamp":"2026-12-02T00:00:00Z","cwd":"/p","tool_name":"Write","tool_input":{"path":"/p/a"}}`, false, "", ""},
		{`{"hook_event_name":"BeforeTool","cwd":"/p","tool_name":"write_file","tool_input":{"file_path":"/p/a"}}`, true, "write_file", "/p/a"},
		{`{"hook_event_name":"BeforeTool","cwd":"/p","tool_name":"run_shell_command","tool_input":{"command":"make"}}`, true, "run_shell_command", "make"},
		{`{"hook_event_name":"BeforeTool","cwd":"/p","tool_name":"read_file","tool_input":{"file_path":"/p/a"}}`, false, "", ""},
		{`{"hook_event_name":"AfterTool","cwd":"/p","tool_name":"write_file","tool_input":{"file_path":"/p/a"}}`, false, "", ""},
	} {
		in, err := barrier.ParseHookInput([]byte(c.in))
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		call, ok := autoCall(in)
		if ok != c.ok || ok && (call.Tool != c.tool || call.Summary != c.summary || !namedBy(in, call.ID)) {
			t.Errorf("%s: %+v %v, want %v %s %q", c.in, call, ok, c.ok, c.tool, c.summary)
		}
		if again, _ := autoCall(in); ok && in.Client().NamesCalls && again.ID == call.ID {
			t.Errorf("%s: two calls named %s alike", c.in, call.ID)
		}
	}
}

// namedBy reports whether id names in's call: the client's id, or for a client whose calls
// agent-rewind names, "<agent>_" and 16 hex digits.
func namedBy(in barrier.Input, id string) bool {
	c := in.Client()
	if c.CallID != "" {
		return id != "" && id == in.ToolUseID
	}
	hex, ok := strings.CutPrefix(id, string(in.Agent)+"_")
	return c.NamesCalls && ok && len(hex) == 16 && strings.Trim(hex, "0123456789abcdef") == ""
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "2GiB": 2 << 30, "500MB": 500e6, "1.5 kib": 1536, "7": 7, "3b": 3, "1TB": 1e12} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "lots", "-1GB", "1e30", "GB", "NaN", "Inf"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) accepted", in)
		}
	}
}

// FuzzParseSize: the setting is outside input; it never panics, and what it accepts is a
// non-negative size.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"2GiB", "0", "1.5mb", "x", "-1", "9e18tib"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if n, err := ParseSize(s); err == nil && n < 0 {
			t.Fatalf("ParseSize(%q) = %d", s, n)
		}
	})
}

// FuzzAutoCall: any hook input the guard parses yields either no call or one with the
// client's id (or agent-rewind's, for a client that names none) and a tool.
func FuzzAutoCall(f *testing.F) {
	f.Add(`{"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"a"},"tool_use_id":"t"}`)
	f.Add(`{"hook_event_name":"PreToolUse","tool_name":"apply_patch","tool_input":{"command":"*** Update File: "},"tool_use_id":"t"}`)
	f.Add(`{"hook_event_name":"preToolUse","conversation_id":"c","tool_name":"Shell","tool_input":"{\"command\":1}","tool_use_id":"t","workspace_roots":["/"]}`)
	f.Add(`{"hookName":"tool_call","taskId":"t","tool_call":{"id":"call_1","name":"agent-rewind__rewind","input":{"id":"x"}}}`)
	f.Add(`{"hook_event_name":"PreToolUse","tool_name":"mcp__plugin_agent-rewind_agent-rewind__checkpoint","tool_input":{},"tool_use_id":"t1"}`)
	f.Fuzz(func(t *testing.T, s string) {
		in, err := barrier.ParseHookInput([]byte(s))
		if err != nil {
			return
		}
		call, ok := autoCall(in)
		if ok && (!namedBy(in, call.ID) || call.Tool == "" || ownTool(in)) {
			t.Fatalf("%s: %+v", s, call)
		}
	})
}
