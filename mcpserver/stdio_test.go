package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var (
	fakeServerOnce sync.Once
	fakeServerBin  string
	fakeServerErr  error
	fakeServerDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if fakeServerDir != "" {
		os.RemoveAll(fakeServerDir)
	}
	os.Exit(code)
}

// fakeServer builds internal/fakeserver (the real stdio server over the fake workspace) once per
// test binary and returns its path.
func fakeServer(t *testing.T) string {
	t.Helper()
	fakeServerOnce.Do(func() {
		fakeServerDir, fakeServerErr = os.MkdirTemp("", "mcpserver-fakeserver-")
		if fakeServerErr != nil {
			return
		}
		fakeServerBin = filepath.Join(fakeServerDir, "fakeserver")
		if runtime.GOOS == "windows" {
			fakeServerBin += ".exe"
		}
		goTool, err := exec.LookPath("go")
		if err != nil {
			goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		out, err := exec.Command(goTool, "build", "-o", fakeServerBin, "./internal/fakeserver").CombinedOutput()
		if err != nil {
			fakeServerErr = &buildError{err, out}
		}
	})
	if fakeServerErr != nil {
		t.Fatalf("building internal/fakeserver: %v", fakeServerErr)
	}
	return fakeServerBin
}

type buildError struct {
	err error
	out []byte
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + string(e.out) }

// TestStdioGoClient drives the real stdio transport of a real server process with the Go SDK's
// client over CommandTransport.
func TestStdioGoClient(t *testing.T) {
	bin := fakeServer(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute) // a bound for a hung child, not a timing assertion
	defer cancel()
	cmd := exec.Command(bin, "-profile", "lean")
	cmd.Env = append(os.Environ(), mcpserver.EnvProfile+"=analytics") // the flag wins
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "stdio-test", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	names := toolNames(t, cs)
	slices.Sort(names)
	if want := []string{"checkpoint", "guard_effect", "rewind"}; !slices.Equal(names, want) {
		t.Errorf("tools = %v, want %v (the -profile flag must beat %s)", names, want, mcpserver.EnvProfile)
	}
	var cp mcpserver.CheckpointResult
	callOK(t, cs, "checkpoint", map[string]any{"label": "stdio"}, &cp)
	var g1, g2 mcpserver.GuardResult
	callOK(t, cs, "guard_effect", map[string]any{"key": "k1"}, &g1)
	callOK(t, cs, "guard_effect", map[string]any{"key": "k1"}, &g2)
	if cp.ID == "" || !g1.Admitted || g2.Admitted {
		t.Errorf("checkpoint %+v, guards %+v %+v", cp, g1, g2)
	}
	var rw mcpserver.RestoreResult
	callOK(t, cs, "rewind", map[string]any{"id": cp.ID}, &rw)
	if rw.ID != cp.ID || rw.SafetyID == "" {
		t.Errorf("rewind = %+v", rw)
	}
}

// TestStdioBadProfile checks that an unknown profile stops the server before any protocol
// traffic: exit status 1, the reason on stderr, nothing on stdout, even with a request waiting.
func TestStdioBadProfile(t *testing.T) {
	bin := fakeServer(t)
	for _, c := range []struct {
		args []string
		env  string
		want string
	}{
		{nil, "bogus", `REWIND_MCP_PROFILE: unknown MCP profile "bogus": use one of lean, recovery, analytics, all`},
		{[]string{"-profile", "max"}, "lean", `--profile: unknown MCP profile "max"`},
	} {
		cmd := exec.Command(bin, c.args...)
		cmd.Env = append(os.Environ(), mcpserver.EnvProfile+"="+c.env)
		cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}` + "\n")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 1 {
			t.Errorf("%v with %s=%s: err = %v, want exit status 1", c.args, mcpserver.EnvProfile, c.env, err)
		}
		if stdout.Len() != 0 {
			t.Errorf("%v: wrote protocol traffic before failing: %q", c.args, stdout.String())
		}
		mustContain(t, "stderr", stderr.String(), c.want)
	}
}

// tsResult is one tool call as client.mjs reports it.
type tsResult struct {
	IsError           bool            `json:"isError"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	Text              string          `json:"text"`
}

// tsReport is what testdata/tsclient/client.mjs prints.
type tsReport struct {
	Server       struct{ Name, Version string } `json:"server"`
	Instructions string                         `json:"instructions"`
	Tools        []struct {
		Name            string `json:"name"`
		HasOutputSchema bool   `json:"hasOutputSchema"`
		Annotations     struct {
			DestructiveHint bool `json:"destructiveHint"`
			ReadOnlyHint    bool `json:"readOnlyHint"`
		} `json:"annotations"`
	} `json:"tools"`
	Checkpoint tsResult    `json:"checkpoint"`
	Guard      [2]tsResult `json:"guard"`
	List       *tsResult   `json:"list"`
	Rewind     *tsResult   `json:"rewind"`
}

// requireTool returns the path of an outside tool, or skips the test with a clear message when
// it is missing, unless REWIND_CI=1, where a missing tool is a failure.
func requireTool(t *testing.T, what, path string, err error) string {
	t.Helper()
	if err == nil {
		return path
	}
	msg := what + " is missing: " + err.Error()
	if os.Getenv("REWIND_CI") == "1" {
		t.Fatalf("%s (REWIND_CI=1: .ci/run must install it)", msg)
	}
	t.Skip(msg)
	return ""
}

// TestTypeScriptClient runs the official TypeScript SDK's client (testdata/tsclient/client.mjs,
// dependencies pinned by its package-lock.json) against the stdio server: a client nobody here
// wrote, whose SDK also validates every structured result against the tool's output schema.
// It needs node and `npm ci --prefix mcpserver/testdata/tsclient`.
func TestTypeScriptClient(t *testing.T) {
	node, err := exec.LookPath("node")
	node = requireTool(t, "node", node, err)
	dir := filepath.Join("testdata", "tsclient")
	_, err = os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json"))
	requireTool(t, "the TypeScript SDK (run: npm ci --prefix mcpserver/testdata/tsclient)", "", err)
	bin := fakeServer(t)

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute) // a bound for a hung child, not a timing assertion
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "client.mjs"), "--cwd", t.TempDir(), "--key", "deploy:ts:1", "--rewind", "toolu_ts2",
		"--", bin, "-auto", "sess-1:toolu_ts1:Bash: npm install", "-auto", "sess-1:toolu_ts2:Edit: main.go")
	cmd.Env = append(os.Environ(), mcpserver.EnvProfile+"=all")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("client.mjs: %v\nstderr:\n%s", err, stderr.String())
	}
	var r tsReport
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("client.mjs output is not its JSON report: %v\n%s", err, stdout.String())
	}

	if r.Server.Name != mcpserver.ServerName || r.Instructions != mcpserver.Instructions(mcpserver.ProfileAll) {
		t.Errorf("server %+v, instructions %q", r.Server, r.Instructions)
	}
	var names []string
	for _, tool := range r.Tools {
		names = append(names, tool.Name)
		if !tool.HasOutputSchema {
			t.Errorf("tool %s has no output schema", tool.Name)
		}
		if tool.Name == "rewind" && !tool.Annotations.DestructiveHint || tool.Name == "list" && !tool.Annotations.ReadOnlyHint {
			t.Errorf("tool %s annotations %+v", tool.Name, tool.Annotations)
		}
	}
	slices.Sort(names)
	want := mcpserver.ProfileAll.Tools()
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("tools = %v, want %v", names, want)
	}

	var cp mcpserver.CheckpointResult
	if r.Checkpoint.IsError || json.Unmarshal(r.Checkpoint.StructuredContent, &cp) != nil || cp.ID == "" || cp.Label != "tsclient" {
		t.Errorf("checkpoint = %+v", r.Checkpoint)
	}
	mustContain(t, "checkpoint text", r.Checkpoint.Text, "Keep this id", cp.ID)
	var g1, g2 mcpserver.GuardResult
	if r.Guard[0].IsError || json.Unmarshal(r.Guard[0].StructuredContent, &g1) != nil || !g1.Admitted || g1.Key != "deploy:ts:1" {
		t.Errorf("first guard = %+v", r.Guard[0])
	}
	if r.Guard[1].IsError || json.Unmarshal(r.Guard[1].StructuredContent, &g2) != nil || g2.Admitted || g2.Code != "spent" {
		t.Errorf("second guard = %+v (a refusal is a result, not a tool error)", r.Guard[1])
	}
	mustContain(t, "refusal text", r.Guard[1].Text, "REFUSED", "do NOT perform")
	if cp.Next != "rewind "+cp.ID+" restores this state" || g2.Next != "do NOT perform it" {
		t.Errorf("next steps: checkpoint %q, refusal %q", cp.Next, g2.Next)
	}

	// What the model reads from list (the structured result): the tool calls by session.
	var ls mcpserver.ListResult
	if r.List == nil || r.List.IsError || json.Unmarshal(r.List.StructuredContent, &ls) != nil {
		t.Fatalf("list = %+v", r.List)
	}
	if len(ls.Sessions) != 1 || ls.Sessions[0].ID != "sess-1" || len(ls.Sessions[0].Calls) != 2 ||
		ls.Sessions[0].Calls[0].ID != "toolu_ts2" || ls.Sessions[0].Calls[0].Label != "Edit: main.go" || ls.Sessions[0].Calls[0].Checkpoint != "cp0002" {
		t.Errorf("list sessions = %+v", ls.Sessions)
	}
	var rw mcpserver.RestoreResult
	if r.Rewind == nil || r.Rewind.IsError || json.Unmarshal(r.Rewind.StructuredContent, &rw) != nil || rw.ID != "cp0002" || rw.Next != "rewind "+rw.SafetyID+" undoes this" {
		t.Errorf("rewind toolu_ts2 = %+v", r.Rewind)
	}
}

// TestInspectorStrict runs the MCP Inspector's tool-schema portability check
// (mcp-inspector --cli --method tools/list --strict, which exits 6 on an error finding and prints
// every finding on stderr) against every profile, and requires no finding at all, warnings
// included. It is opt-in: set REWIND_INSPECTOR to an mcp-inspector executable (npm package
// @modelcontextprotocol/inspector; 2.12.0 was used). CI does not install the Inspector: it needs
// node 22.19 or newer, and its lock cannot be reproduced with npm ci from the registry this
// project uses (an optional dependency of vite is missing there). TestSchemasPortable enforces
// the same rules, and more, on every run.
func TestInspectorStrict(t *testing.T) {
	inspector := os.Getenv("REWIND_INSPECTOR")
	if inspector == "" {
		t.Skip("opt-in: set REWIND_INSPECTOR=/path/to/mcp-inspector to run the MCP Inspector's --strict schema check")
	}
	bin := fakeServer(t)
	for _, p := range mcpserver.Profiles() {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute) // a bound for a hung child, not a timing assertion
		cmd := exec.CommandContext(ctx, inspector, "--cli", "--method", "tools/list", "--strict", bin, "-profile", string(p))
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir()) // the Inspector keeps a catalog under HOME
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		cancel()
		if err != nil || strings.TrimSpace(stderr.String()) != "" {
			t.Errorf("profile %s: mcp-inspector --strict: %v\n%s", p, err, stderr.String())
		}
		if !strings.Contains(stdout.String(), `"tools"`) {
			t.Errorf("profile %s: no tools/list answer from the Inspector:\n%s", p, stdout.String())
		}
	}
}
