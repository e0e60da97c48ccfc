package agentconfig

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runsAll stands for programs that exist and run: the test names them, it does not start them.
func runsAll(string) error { return nil }

func problemsOf(r ClientReport) string {
	var out []string
	for _, p := range r.Problems {
		out = append(out, p.Problem+" => "+p.Fix)
	}
	return strings.Join(out, "\n")
}

// After setup, every client's files are found and nothing is wrong with them.
func TestInspectAfterSetup(t *testing.T) {
	for _, c := range Clients() {
		req := testRequest(t, c.Name, ScopeProject)
		if _, err := Run(req); err != nil {
			t.Fatal(err)
		}
		r := Inspect(c, req.Loc, runsAll)
		if !r.Found || len(r.Problems) > 0 {
			t.Errorf("%s after setup: found %v, problems:\n%s", c.Name, r.Found, problemsOf(r))
		}
		for _, f := range r.Files {
			for _, h := range f.Hooks {
				if len(h.Programs) == 0 || !strings.HasPrefix(h.Programs[0], "/opt/ar/bin/") {
					t.Errorf("%s %s: programs %v", c.Name, h.Event, h.Programs)
				}
			}
		}
	}
}

// What doctor must catch, each with the command that fixes it: a matcher edited away from the
// MCP tools, a program that is gone, the plugin's hooks copied into settings.
func TestInspectFindsProblems(t *testing.T) {
	req := testRequest(t, "claude-code", ScopeProject)
	if _, err := Run(req); err != nil {
		t.Fatal(err)
	}
	settings := filepath.Join(req.Loc.Root, ".claude", "settings.json")
	b, _ := os.ReadFile(settings)
	edited := strings.Replace(string(b), `"Bash|PowerShell|Edit|Write|MultiEdit|NotebookEdit|mcp__.*"`, `"Bash|Edit|Write"`, 1)
	os.WriteFile(settings, []byte(edited), 0o644)
	r := Inspect(req.Client, req.Loc, runsAll)
	got := problemsOf(r)
	for _, want := range []string{"lets PowerShell, mcp__slack__slack_post_message, MultiEdit, NotebookEdit by unguarded => agent-rewind setup claude-code"} {
		if !strings.Contains(got, want) {
			t.Errorf("an edited matcher: problems\n%s\nwant %q", got, want)
		}
	}

	gone := func(p string) error {
		if strings.HasSuffix(p, "agent-rewind-hook") {
			return errors.New(p + " does not exist")
		}
		return nil
	}
	r = Inspect(req.Client, req.Loc, gone)
	if got := problemsOf(r); !strings.Contains(got, "/opt/ar/bin/agent-rewind-hook does not exist") || !strings.Contains(got, "=> agent-rewind setup claude-code") {
		t.Errorf("a program gone: problems\n%s", got)
	}

	plugin := `{"hooks": {"PreToolUse": [{"matcher": "Bash|mcp__.*", "hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/bin/agent-rewind-hook", "args": ["--workspace", "${CLAUDE_PROJECT_DIR}", "guard", "--checkpoint"]}]}]}}`
	os.WriteFile(settings, []byte(plugin), 0o644)
	r = Inspect(req.Client, req.Loc, runsAll)
	got = problemsOf(r)
	for _, want := range []string{"runs ${CLAUDE_PLUGIN_ROOT}, copied from the plugin", "no hook of agent-rewind's on PostToolUse (confirm)"} {
		if !strings.Contains(got, want) {
			t.Errorf("the plugin's hooks copied: problems\n%s\nwant %q", got, want)
		}
	}
}

func TestMatches(t *testing.T) {
	for _, c := range []struct {
		matcher, tool string
		want          bool
	}{
		{"", "Bash", true}, {"*", "x", true}, {"Bash|mcp__.*", "mcp__shop__send_email", true},
		{"Bash", "BashX", false}, {"run_shell_command|mcp_.*", "mcp_agent-rewind_checkpoint", true}, {"(", "(", true}, {"(", "x", false},
	} {
		if got := Matches(c.matcher, c.tool); got != c.want {
			t.Errorf("Matches(%q, %q) = %v", c.matcher, c.tool, got)
		}
	}
}

func TestFillShell(t *testing.T) {
	f := filler{Binaries{Rewind: "/a b/agent-rewind", Hook: "/a b/agent-rewind-hook"}, "/p"}
	in := `command -v agent-rewind >/dev/null 2>&1 || { echo '{"systemMessage":"agent-rewind is not on PATH, so ...; install it with: npm install -g @agent-rewind/mcp"}'; exit 0; }; command -v agent-rewind-hook >/dev/null 2>&1 && exec agent-rewind-hook guard; exec agent-rewind guard`
	want := `command -v '/a b/agent-rewind' >/dev/null 2>&1 || { echo '{"systemMessage":"agent-rewind is not at /a b/agent-rewind, so ...; install it with: npm install -g @agent-rewind/mcp"}'; exit 0; }; command -v '/a b/agent-rewind-hook' >/dev/null 2>&1 && exec '/a b/agent-rewind-hook' guard; exec '/a b/agent-rewind' guard`
	if got := f.shell(in); got != want {
		t.Errorf("filled:\n%s\nwant\n%s", got, want)
	}
	if got := (filler{Binaries{Rewind: "/x/agent-rewind"}, ""}).shell("agent-rewind-hook guard --checkpoint"); got != "/x/agent-rewind guard --checkpoint" {
		t.Errorf("without agent-rewind-hook: %q", got)
	}
	if err := safePath("/it's/agent-rewind"); err == nil {
		t.Error("a path with ' is accepted")
	}
}
