package barrier

import (
	"encoding/json"
	"regexp"
	"strings"
)

// Gemini CLI's hook events.
const (
	EventBeforeTool  = "BeforeTool"  // decide
	EventAfterTool   = "AfterTool"   // report: nothing to do (no call id)
	EventBeforeAgent = "BeforeAgent" // prompt: after the person's prompt, before the agent plans
)

var gemini = &Client{
	Agent:       AgentGemini,
	Name:        "Gemini CLI",
	EventMember: "hook_event_name",
	Events:      []Event{{EventBeforeTool, RoleDecide}, {EventAfterTool, RoleReport}, {EventBeforeAgent, RolePrompt}},
	ShellTools:  []string{"run_shell_command"},
	FileTools:   []string{"write_file", "replace"},
	MCPNames:    "mcp_<server>_<tool> (characters outside [a-zA-Z0-9_.:-] written _), with mcp_context {server_name, tool_name} in BeforeTool",
	CallID:      "",   // the model's functionCall ids are not passed to hooks
	NamesCalls:  true, // one BeforeTool per call: agent-rewind names it for the automatic checkpoint
	HookEnv: "its own environment (redacted only with security.environmentVariableRedaction, or on GitHub Actions), " +
		"with GEMINI_PROJECT_DIR, GEMINI_CWD and CLAUDE_PROJECT_DIR set to its working directory; hooks run there",
	MCPEnv: "its environment with names that look like secrets removed (on GitHub Actions, GITHUB_SHA set, only a short allow-list: " +
		"XDG_* and REWIND_* are dropped); servers start in its working directory",
	Answers: "stdout (else stderr) is read as JSON, else as text: exit 0 lets the call run, exit 1 lets it run with a warning, " +
		"any other code (2, and 127 for a missing program) blocks it with the text as the reason the model reads; " +
		"a hook that times out lets it run; a project's .gemini/settings.json is read only in a trusted folder",
	// Gemini prints a hook's systemMessage on stderr ("Hook system message: ..."): the person
	// sees it, the model does not (TestGeminiCLIGuardCannotRun in tools/agents).
	SystemMessage: true,
	Checked:       "Gemini CLI 0.61.0 run against a mock model (payloads captured 2026-12-02) and its bundled hookRunner",
	claims: func(f fields) bool {
		event, _, _ := f.str("hook_event_name")
		return event == EventBeforeTool || event == EventAfterTool || event == EventBeforeAgent
	},
	parse: func(f fields) (Input, error) {
		in, err := parseClaudeShape(f, AgentGemini)
		if err != nil {
			return in, err
		}
		if server, tool, ok := geminiMCP(f, in.ToolName); ok {
			in.setMCP(server, tool)
		}
		return in, nil
	},
	allow:  func(Input, bool) Answer { return Answer{Stdout: "{}\n"} }, // Gemini parses stdout as JSON
	refuse: exitTwo,
	spell:  func(server string) string { return geminiUnsafe.ReplaceAllString(server, "_") },
	mcpName: func(server, tool string) string {
		return geminiUnsafe.ReplaceAllString("mcp_"+server+"_"+tool, "_")
	},
}

// geminiUnsafe is what Gemini CLI replaces by "_" in an MCP tool's name.
var geminiUnsafe = regexp.MustCompile(`[^a-zA-Z0-9_\-.:]`)

// geminiMCP reads an MCP call's server and tool: mcp_context's when the input has it, else the
// tool name, mcp_<server>_<tool> as Gemini CLI parses it (a server name without "_"), or the
// mcp__<server>__<tool> of earlier versions' documentation.
func geminiMCP(f fields, name string) (server, tool string, ok bool) {
	var mc struct {
		Server string `json:"server_name"`
		Tool   string `json:"tool_name"`
	}
	if raw, has := f["mcp_context"]; has && json.Unmarshal(raw, &mc) == nil && mc.Server != "" && mc.Tool != "" {
		return mc.Server, mc.Tool, true
	}
	if server, tool, ok := cutMCPClaudeName(name); ok {
		return server, tool, true
	}
	rest, ok := strings.CutPrefix(name, "mcp_")
	if !ok {
		return "", "", false
	}
	server, tool, ok = strings.Cut(rest, "_")
	return server, tool, ok && server != "" && tool != ""
}
