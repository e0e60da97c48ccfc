package command

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/cli/internal/hook"
	"github.com/agent-rewind/rewind/cli/internal/workspace"
	"github.com/alecthomas/kong"
)

// runMain runs Main in-process, with or without the guard's fast path.
func runMain(t testing.TB, fast bool, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	defer func(old bool) { fastGuard = old }(fastGuard)
	fastGuard = fast
	var out, errb bytes.Buffer
	code = Main(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

const (
	nonEffect = `{"session_id": "s", "transcript_path": "/t", "cwd": "/w", "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls -la"}, "tool_use_id": "toolu_1"}`
	effect    = `{"session_id": "s", "transcript_path": "/t", "cwd": "/w", "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "git push"}, "tool_use_id": "toolu_2"}`
	cursorLs  = `{"conversation_id": "c", "hook_event_name": "beforeShellExecution", "command": "ls", "cwd": "/w"}`
)

// The fast path for "guard" must answer exactly as the kong-parsed command does, for every
// argument form it accepts, and leave every other form to kong.
func TestGuardFastPathMatchesKong(t *testing.T) {
	t.Setenv("REWIND_STATE_DIR", t.TempDir())
	for _, c := range []struct {
		stdin string
		args  func(root string) []string
	}{
		{nonEffect, func(root string) []string { return []string{"--workspace", root, "guard"} }},
		{nonEffect, func(root string) []string { return []string{"guard", "--workspace", root} }},
		{nonEffect, func(root string) []string { return []string{"--workspace=" + root, "guard", "--json"} }},
		{cursorLs, func(root string) []string { return []string{"--workspace", root, "guard"} }},
		{"", func(root string) []string { return []string{"--workspace", root, "guard", cursorLs} }},
		{effect, func(root string) []string { return []string{"--workspace", root, "guard"} }},
		{"", func(root string) []string {
			return []string{"--workspace", root, "--json", "guard", `{"key": "k", "payload": 1}`}
		}},
		{"not json", func(root string) []string { return []string{"--workspace", root, "guard"} }},
		{"not json", func(root string) []string { return []string{"--json", "--workspace", root, "guard"} }},
		{nonEffect, func(root string) []string { return []string{"--workspace", "", "guard"} }},
		{effect, func(root string) []string { return []string{"--workspace=", "--json", "guard"} }},
		{effect, func(root string) []string { return []string{"--workspace", "${CLAUDE_PROJECT_DIR}", "guard"} }},
		{`{"key": "k", "payload": 1}`, func(root string) []string {
			return []string{"--state-dir", filepath.Join(root, "..", filepath.Base(root)+"-state"), "--workspace", root, "guard"}
		}},
	} {
		var got [2][3]string
		for i, fast := range []bool{true, false} {
			root := t.TempDir()
			code, out, errs := runMain(t, fast, c.stdin, c.args(root)...)
			// Decisions carry times and the workspace path; compare their shape.
			out = strings.ReplaceAll(out, root, "ROOT")
			out = timeRE(out)
			got[i] = [3]string{string(rune('0' + code)), out, errs}
		}
		if got[0] != got[1] {
			t.Errorf("args %q, stdin %.40q:\nfast path: %q\nkong:      %q", c.args("ROOT"), c.stdin, got[0], got[1])
		}
	}
}

// timeRE blanks RFC 3339 times.
func timeRE(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if i+20 <= len(s) && s[i+4] == '-' && s[i+7] == '-' && s[i+10] == 'T' && s[i+13] == ':' {
			j := i + 19
			for j < len(s) && s[j] != '"' {
				j++
			}
			b.WriteString("TIME")
			i = j - 1
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func TestGuardFastPathDeclines(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"version"},
		{"guard", "--help"},
		{"--help", "guard"},
		{"guard", "-h"},
		{"guard", "{}", "{}"},
		{"guard", "--bogus"},
		{"guard", "--", "{}"},
		{"--workspace", "guard"},
		{"--state-dir", "", "guard"},
		{"--state-dir", "guard"},
		{"release", "guard"},
		{"effects", "guard"},
		{"guard", "guard", "x"},
	} {
		if _, ok := guardFastPath(args, strings.NewReader(""), io.Discard, io.Discard); ok {
			t.Errorf("the fast path took %q: only kong may", args)
		}
	}
	code, out, _ := runMain(t, true, "", "guard", "--help")
	if code != 0 || !strings.Contains(out, "Usage: agent-rewind guard [<json>]") {
		t.Fatalf("guard --help: %d %q", code, out)
	}
}

// The non-effect path must not create a store, nor write in the workspace (nor read anything
// but the rules file).
func TestGuardNonEffectCreatesNothing(t *testing.T) {
	root := t.TempDir()
	if code, out, errs := runMain(t, true, nonEffect, "--workspace", root, "guard"); code != 0 || out != "" || errs != "" {
		t.Fatalf("non-effect: %d %q %q", code, out, errs)
	}
	if ents, err := os.ReadDir(root); err != nil || len(ents) != 0 || workspace.HasStore(root) {
		t.Fatalf("the workspace has %d entries (%v), store %v", len(ents), err, workspace.HasStore(root))
	}
}

// BenchmarkGuardNonEffect is the hot path in-process: what the guard adds to process start.
func BenchmarkGuardNonEffect(b *testing.B) {
	root := b.TempDir()
	for b.Loop() {
		if code, _, _ := runMain(b, true, nonEffect, "--workspace", root, "guard"); code != 0 {
			b.Fatal(code)
		}
	}
}

// BenchmarkGuardNonEffectKong is the same through kong's parser: the difference is what the
// fast path saves each hook process.
func BenchmarkGuardNonEffectKong(b *testing.B) {
	root := b.TempDir()
	for b.Loop() {
		if code, _, _ := runMain(b, false, nonEffect, "--workspace", root, "guard"); code != 0 {
			b.Fatal(code)
		}
	}
}

// BenchmarkKongModel is building the kong model of the whole command tree, which grows with
// every command added; the guard's fast path skips it.
func BenchmarkKongModel(b *testing.B) {
	for b.Loop() {
		var cli CLI
		if _, err := kong.New(&cli, kong.Name("agent-rewind")); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzGuardArgs checks the guard's fast path (and the hook binary's parser) against kong: every
// command line that hook.ParseArgs accepts, kong parses to the guard command with the same
// workspace, --workspace as given, --state-dir, --json, --checkpoint and input. (Lines it declines go to kong anyway.) The fuzz input is the arguments joined by NUL.
func FuzzGuardArgs(f *testing.F) {
	for _, seed := range []string{
		"guard",
		"--workspace\x00/tmp/w\x00guard",
		"guard\x00--workspace\x00/tmp/w",
		"--workspace=rel/dir\x00--json\x00guard\x00{\"key\":\"k\"}",
		"guard\x00{}\x00--json",
		"--workspace\x00guard\x00guard",
		"guard\x00guard",
		"guard\x00release",
		"--workspace=~/x\x00guard",
		"guard\x00--help",
		"guard\x00-",
		"guard\x00--workspace=",
		"--workspace\x00/tmp/w\x00guard\x00--checkpoint",
		"guard\x00--checkpoint\x00{}",
		"--checkpoint\x00guard",
		"--workspace\x00\x00guard",
		"--workspace=\x00guard\x00--json",
		"--state-dir\x00/tmp/s\x00guard",
		"--state-dir=rel\x00--workspace\x00w\x00guard",
		"--state-dir\x00\x00guard",
		"--workspace=${CLAUDE_PROJECT_DIR}\x00guard",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, joined string) {
		args := strings.Split(joined, "\x00")
		wd, _ := os.Getwd()
		g, stateDir, ok := hook.ParseArgs(args, wd)
		if !ok {
			return
		}
		var cli CLI
		parser, err := kong.New(&cli, kong.Name("agent-rewind"), kong.Writers(io.Discard, io.Discard),
			kong.Exit(func(int) { panic("kong exited") }))
		if err != nil {
			t.Fatal(err)
		}
		ctx, err := func() (ctx *kong.Context, err error) {
			defer func() {
				if r := recover(); r != nil {
					err = errors.New("kong exited")
				}
			}()
			return parser.Parse(args)
		}()
		if err != nil {
			t.Fatalf("the fast path took %q, which kong rejects: %v", args, err)
		}
		if cmd := ctx.Command(); cmd != "guard" && cmd != "guard <json>" {
			t.Fatalf("the fast path took %q as guard; kong runs %q", args, cmd)
		}
		flag, set := workspaceFlag(args)
		if cli.Workspace != g.Workspace || cli.StateDir != stateDir || cli.JSON != g.JSON || cli.Guard.Input != g.Input || cli.Guard.Checkpoint != g.Checkpoint || flag != g.WorkspaceFlag || set != g.WorkspaceSet {
			t.Fatalf("%q: fast path workspace %q (%q %v) state %q json %v input %q checkpoint %v; kong %q (%q %v) %q %v %q %v", args, g.Workspace, g.WorkspaceFlag, g.WorkspaceSet, stateDir, g.JSON, g.Input, g.Checkpoint, cli.Workspace, flag, set, cli.StateDir, cli.JSON, cli.Guard.Input, cli.Guard.Checkpoint)
		}
	})
}

// A workspace that contains the state folder (a session in the user's home) can have no store:
// calls that are not effects pass, an effect is refused with the reason.
func TestGuardInAWorkspaceHoldingTheStateFolder(t *testing.T) {
	root := t.TempDir()
	t.Setenv(workspace.StateDirEnv, filepath.Join(root, ".local", "state", "agent-rewind"))
	if code, out, errs := runMain(t, true, nonEffect, "--workspace", root, "guard"); code != 0 || out != "" || errs != "" {
		t.Fatalf("non-effect: %d %q %q", code, out, errs)
	}
	code, _, errs := runMain(t, true, `{"key": "deploy-1", "payload": {}}`, "--workspace", root, "guard")
	if code != 2 || !strings.Contains(errs, "inside the workspace") {
		t.Fatalf("effect: %d %q", code, errs)
	}
}
