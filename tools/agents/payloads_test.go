package agents

import "testing"

func TestPayloadName(t *testing.T) {
	for in, want := range map[string]string{
		`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git push origin main"}}`:   "pretooluse-bash-git-push.json",
		`{"hook_event_name":"PostToolUse","tool_name":"mcp__shop__send_email","tool_input":{"to":"a"}}`:         "posttooluse-mcp__shop__send_email.json",
		`{"toolName":"bash","toolArgs":{"command":"/usr/bin/printf 'x y'"}}`:                                    "bash-printf.json",
		`{"hookName":"tool_call","tool_call":{"id":"call_1","name":"run_commands"}}`:                            "tool_call-run_commands.json",
		`{"hook_event_name":"BeforeTool","tool_name":"mcp_shop_send_email","tool_input":{"command":"a b/c d"}}`: "beforetool-mcp_shop_send_email-a.json",
		`{"agent_action_name":"pre_run_command","tool_info":{"command_line":"ls"}}`:                             "pre_run_command.json",
		`{}`:                                 "unnamed.json",
		`not json`:                           "unreadable.json",
		`{"hook_event_name":"Pre Tool/Use"}`: "pre_tool_use.json",
	} {
		if got := PayloadName([]byte(in)); got != want {
			t.Errorf("PayloadName(%s) = %q, want %q", in, got, want)
		}
	}
}
