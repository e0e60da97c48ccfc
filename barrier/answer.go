package barrier

import (
	"encoding/json"
	"fmt"
)

// Answer is what the guard process writes and how it exits, in the protocol of the agent that
// called it. The CLI writes Stdout and Stderr as they are and exits with ExitCode.
type Answer struct {
	Stdout   string `json:"stdout,omitempty"`
	Stderr   string `json:"stderr,omitempty"`
	ExitCode int    `json:"exit_code"`
}

// Respond turns the outcome of one guard input into the answer for its agent:
//
//   - Claude Code, VS Code, Codex, Gemini CLI and Windsurf, deciding events (PreToolUse,
//     BeforeTool, pre_run_command, pre_mcp_tool_use): refused → exit 2 with the reason on stderr
//     and nothing on stdout (exit 2 is the code all of them read as "block"; the reason reaches
//     the model). Admitted or not an effect → exit 0, printing nothing (Gemini CLI: "{}", since
//     it parses stdout as JSON): printing a JSON "allow" would skip the user's own permission
//     prompt.
//   - The same agents' reports (PostToolUse, PostToolUseFailure, PermissionDenied, AfterTool,
//     post_*) and any other event → exit 0, printing nothing ("{}" for Gemini CLI); an error →
//     exit 1 with the error on stderr, which the agent shows as a non-blocking hook error (the
//     tool already ran or was denied).
//   - Cursor beforeShellExecution, beforeMCPExecution and preToolUse → exit 0 with JSON on
//     stdout: {"permission":"allow"}, or {"permission":"deny","user_message":...,"agent_message":...}.
//     Other Cursor events → exit 0 with {}.
//   - VS Code, refused: exit 2 with the reason on stderr and also the documented JSON decision
//     {"hookSpecificOutput":{"hookEventName","permissionDecision":"deny","permissionDecisionReason"}}
//     on stdout, so that either reading refuses.
//   - Cline → exit 0 with {"cancel":false}, or {"cancel":true,"errorMessage":...} to refuse
//     (Cline then stops the task, not only the call).
//   - The explicit form → exit 0 when admitted, exit 2 with the reason on stderr when refused;
//     the CLI prints the Decision itself (text or --json).
//
// An error while deciding an effect (a bad rules file, a ledger or chain that cannot be
// written, no workspace to record in) fails closed: the call is refused with the error as the
// reason, because running it unrecorded is what the barrier exists to prevent. Input that
// could not be parsed (in.Agent is "") is refused too (exit 2, the error on stderr naming the
// inputs the guard knows) unless in.Event names a report, which exits 1 (shown, not
// blocking). d is the zero Decision when nothing was decided.
func Respond(in Input, d Decision, err error) Answer {
	deciding := isDeciding(in)
	switch {
	case in.Agent == "" && IsDecidingEvent(in.Event):
		return Answer{Stderr: fmt.Sprintf("agent-rewind guard refused this call: it could not read the hook input, so the call would run unrecorded: %v\n", err), ExitCode: 2}
	case in.Agent == "":
		return Answer{Stderr: fmt.Sprintf("agent-rewind guard: %v\n", err), ExitCode: 1}
	case err != nil && deciding:
		if d.Refused() { // refused, and the refusal could not be recorded: still refused
			return refuse(in, d.Key, string(d.Code), d.Reason)
		}
		reason := fmt.Sprintf("agent-rewind could not check this call against its effect ledger, so it is refused: %v. Tell the user: they can fix the cause and retry.", err)
		return refuse(in, d.Key, "error", reason)
	case err != nil:
		return Answer{Stderr: fmt.Sprintf("agent-rewind guard: %s %s: %v\n", in.Agent, in.Event, err), ExitCode: 1}
	case d.Refused():
		return refuse(in, d.Key, string(d.Code), d.Reason)
	case in.Agent == AgentCursor && deciding:
		return Answer{Stdout: `{"permission":"allow"}` + "\n"}
	case in.Agent == AgentCursor, in.Agent == AgentGemini:
		return Answer{Stdout: "{}\n"}
	case in.Agent == AgentCline:
		return Answer{Stdout: `{"cancel":false}` + "\n"}
	}
	return Answer{}
}

// isDeciding reports whether the input asks whether a call may run (as opposed to reporting
// what happened to one).
func isDeciding(in Input) bool {
	return in.Event != "" && IsDecidingEvent(in.Event)
}

func refuse(in Input, key, code, reason string) Answer {
	user := "agent-rewind refused this call"
	if key != "" {
		user = fmt.Sprintf("agent-rewind refused effect %s (%s)", quoteKey(key), code)
	}
	switch in.Agent {
	case AgentCursor:
		out, _ := json.Marshal(struct {
			Permission   string `json:"permission"`
			UserMessage  string `json:"user_message"`
			AgentMessage string `json:"agent_message"`
		}{"deny", user, reason})
		return Answer{Stdout: string(out) + "\n"}
	case AgentCline:
		out, _ := json.Marshal(struct {
			Cancel       bool   `json:"cancel"`
			ErrorMessage string `json:"errorMessage"`
		}{true, user + ": " + reason})
		return Answer{Stdout: string(out) + "\n"}
	case AgentVSCode:
		// VS Code's reference documents the JSON decision; exit 2 is Claude Code's block, which
		// VS Code's hooks follow. Say both: a reader of either refuses.
		type specific struct {
			HookEventName            string `json:"hookEventName"`
			PermissionDecision       string `json:"permissionDecision"`
			PermissionDecisionReason string `json:"permissionDecisionReason"`
		}
		out, _ := json.Marshal(struct {
			HookSpecificOutput specific `json:"hookSpecificOutput"`
		}{specific{in.Event, "deny", reason}})
		return Answer{Stdout: string(out) + "\n", Stderr: reason + "\n", ExitCode: 2}
	}
	return Answer{Stderr: reason + "\n", ExitCode: 2}
}
