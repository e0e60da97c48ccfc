package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// requireTool skips when an outside tool the test needs is missing, or fails under REWIND_CI=1,
// where .ci/run must have installed it.
func requireTool(tb testing.TB, what string, err error) {
	tb.Helper()
	if err == nil {
		return
	}
	msg := fmt.Sprintf("%s is missing: %v", what, err)
	if os.Getenv("REWIND_CI") == "1" {
		tb.Fatalf("%s (REWIND_CI=1: .ci/run must install it)", msg)
	}
	tb.Skip(msg)
}

// npmInstall is the host platform's packages, built from this tree and installed twice from
// their tarballs: globally with install scripts (G) and into a project without them (L).
type npmInstall struct {
	tmp      string
	env      []string // npm with no registry: offline, and the registry a closed loopback port
	binary   string   // the release binary itself
	hook     string   // the release's agent-rewind-hook itself
	global   string   // G/bin/agent-rewind: what npm i -g puts on PATH
	project  string   // L: a project with @agent-rewind/mcp installed with --ignore-scripts
	launcher string   // L's bin/agent-rewind: the node launcher
	tarballs []string // the packed packages, the main package's first
}

// closedPort is a loopback address nothing listens on: a registry request fails at once.
func closedPort(tb testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// installNPM builds the host binary and the npm packages with the release tool's own code and
// installs the tarballs with no registry: --offline, and npm_config_registry on a closed port.
func installNPM(tb testing.TB) *npmInstall {
	tb.Helper()
	endToEnd(tb)
	_, err := exec.LookPath("node")
	requireTool(tb, "node", err)
	_, err = exec.LookPath("npm")
	requireTool(tb, "npm", err)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		tb.Fatal(err)
	}
	tmp := tb.TempDir()
	host, err := ParseTargets("host")
	if err != nil {
		tb.Skipf("no release binary for this machine: %v", err)
	}
	o := Options{Root: root, Out: filepath.Join(tmp, "dist"), Version: "v0.3.0-test.1", Commit: "0123456789abcdef", Targets: host, Log: io.Discard}
	bins, err := Build(tb.Context(), o)
	if err != nil {
		tb.Fatal(err)
	}
	tarballs, err := Pack(tb.Context(), o, bins)
	if err != nil {
		tb.Fatal(err)
	}
	n := &npmInstall{tmp: tmp, binary: bins[host[0]].Main, hook: bins[host[0]].Hook, project: filepath.Join(tmp, "project"), tarballs: tarballs}
	n.env = append(os.Environ(),
		"npm_config_registry=http://"+closedPort(tb)+"/", "npm_config_offline=true", "npm_config_fetch_retries=0",
		"npm_config_cache="+filepath.Join(tmp, "npm-cache"), "npm_config_userconfig="+filepath.Join(tmp, "npmrc"),
		"npm_config_update_notifier=false", "npm_config_fund=false", "npm_config_audit=false",
		"REWIND_STATE_DIR="+filepath.Join(tmp, "state"), "XDG_STATE_HOME="+filepath.Join(tmp, "xdg-state"))
	npm := func(args ...string) {
		cmd := exec.Command("npm", args...)
		cmd.Dir, cmd.Env = tmp, n.env
		if out, err := cmd.CombinedOutput(); err != nil {
			tb.Fatalf("npm %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	// What the README shows as npm install -g, into a prefix of its own.
	npm(append([]string{"install", "--global", "--prefix", filepath.Join(tmp, "global")}, tarballs...)...)
	n.global = filepath.Join(tmp, "global", "bin", "agent-rewind")
	// A project where install scripts are disabled: the launcher stays.
	if err := os.MkdirAll(n.project, 0o755); err != nil {
		tb.Fatal(err)
	}
	npm(append([]string{"install", "--ignore-scripts", "--prefix", n.project}, tarballs...)...)
	n.launcher = filepath.Join(n.project, "node_modules", "@agent-rewind", "mcp", "bin", "agent-rewind")
	return n
}

// run runs name with args in dir under the install's environment and returns the outputs and
// the exit code.
func (n *npmInstall) run(t *testing.T, dir, name string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, n.env
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var xe *exec.ExitError
	if errors.As(err, &xe) {
		return o.String(), e.String(), xe.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return o.String(), e.String(), 0
}

func startsWith(t *testing.T, path, prefix string) bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.HasPrefix(b, []byte(prefix))
}

// TestNPMPackage installs the packed tarballs with no registry and uses them as people do: the
// official TypeScript MCP SDK client through `npx -y @agent-rewind/mcp mcp` (checkpoint, a shell
// change, rewind, guard twice), and `agent-rewind checkpoint` through the bin npm i -g installs.
// It needs node, npm and `npm ci --prefix mcpserver/testdata/tsclient`; it skips without them
// unless REWIND_CI=1.
func TestNPMPackage(t *testing.T) {
	sdk, err := filepath.Abs(filepath.Join("..", "..", "mcpserver", "testdata", "tsclient", "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = os.Stat(filepath.Join(sdk, "@modelcontextprotocol", "sdk", "package.json"))
	requireTool(t, "the TypeScript MCP SDK (run: npm ci --prefix mcpserver/testdata/tsclient)", err)
	n := installNPM(t)

	t.Run("global bin is the native binary", func(t *testing.T) {
		// The postinstall put the binary itself where npm linked the bin: no node per call.
		if startsWith(t, n.global, "#!") {
			t.Fatalf("%s is still the node launcher after an install with scripts", n.global)
		}
		ws := t.TempDir()
		if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		out, errOut, code := n.run(t, ws, n.global, "checkpoint")
		if code != 0 {
			t.Fatalf("agent-rewind checkpoint: exit %d\n%s%s", code, out, errOut)
		}
		out, _, code = n.run(t, ws, n.global, "--json", "list")
		var list struct{ Checkpoints []struct{ ID string } }
		if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list.Checkpoints) != 1 {
			t.Fatalf("agent-rewind --json list after one checkpoint: exit %d, %s", code, out)
		}
		out, _, _ = n.run(t, ws, n.global, "version")
		if !strings.Contains(out, "v0.3.0-test.1 (release, commit 0123456789abcdef") {
			t.Fatalf("version through the installed bin: %q", out)
		}
	})

	t.Run("npx mcp with the TypeScript SDK", func(t *testing.T) {
		if !startsWith(t, n.launcher, "#!/usr/bin/env node") {
			t.Fatalf("%s: with --ignore-scripts the launcher should have stayed", n.launcher)
		}
		// The client's folder sees the pinned SDK as its node_modules.
		client := t.TempDir()
		src, err := os.ReadFile(filepath.Join("testdata", "npmclient.mjs"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(client, "npmclient.mjs"), src, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(sdk, filepath.Join(client, "node_modules")); err != nil {
			t.Fatal(err)
		}
		// The workspace is a folder of the project, so npx finds the installed package from it.
		ws := filepath.Join(n.project, "ws")
		if err := os.MkdirAll(ws, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, "keep.txt"), []byte("original\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		shell := "printf 'changed by a shell\\n' > keep.txt && printf 'new\\n' > new.txt"
		out, errOut, code := n.run(t, ws, "node", filepath.Join(client, "npmclient.mjs"), "--cwd", ws, "--shell", shell, "--",
			"npx", "-y", "@agent-rewind/mcp", "mcp")
		if code != 0 {
			t.Fatalf("npmclient.mjs: exit %d\nstderr:\n%s", code, errOut)
		}
		type result struct {
			IsError           bool            `json:"isError"`
			StructuredContent json.RawMessage `json:"structuredContent"`
			Text              string          `json:"text"`
		}
		var report struct {
			Checkpoint, Rewind result
			Guard              [2]result
		}
		if err := json.Unmarshal([]byte(out), &report); err != nil {
			t.Fatalf("npmclient.mjs report: %v\n%s", err, out)
		}
		var cp struct{ ID string }
		if report.Checkpoint.IsError || json.Unmarshal(report.Checkpoint.StructuredContent, &cp) != nil || cp.ID == "" {
			t.Fatalf("checkpoint: %+v", report.Checkpoint)
		}
		if report.Rewind.IsError {
			t.Fatalf("rewind: %+v", report.Rewind)
		}
		if b, err := os.ReadFile(filepath.Join(ws, "keep.txt")); err != nil || string(b) != "original\n" {
			t.Fatalf("after the rewind keep.txt is %q (%v), want the checkpointed %q", b, err, "original\n")
		}
		if _, err := os.Stat(filepath.Join(ws, "new.txt")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("after the rewind new.txt, made by the shell, still exists (%v)", err)
		}
		var g1, g2 struct {
			Admitted bool
			Code     string
		}
		if report.Guard[0].IsError || json.Unmarshal(report.Guard[0].StructuredContent, &g1) != nil || !g1.Admitted {
			t.Fatalf("first guard: %+v", report.Guard[0])
		}
		if report.Guard[1].IsError || json.Unmarshal(report.Guard[1].StructuredContent, &g2) != nil || g2.Admitted || g2.Code != "spent" {
			t.Fatalf("second guard: %+v", report.Guard[1])
		}
	})

	t.Run("launcher passes the exit code and outputs through", func(t *testing.T) {
		dir := t.TempDir()
		for _, args := range [][]string{{"no-such-command"}, {"--json", "version"}, {"guard", "--help"}} {
			bo, be, bc := n.run(t, dir, n.binary, args...)
			lo, le, lc := n.run(t, dir, n.launcher, args...)
			if bo != lo || be != le || bc != lc {
				t.Errorf("%v: binary exit %d %q %q; launcher exit %d %q %q", args, bc, bo, be, lc, lo, le)
			}
		}
	})

	t.Run("launcher passes a signal through", func(t *testing.T) {
		for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
			got := signalled(t, n, n.launcher, sig)
			want := signalled(t, n, n.binary, sig)
			if got != want {
				t.Errorf("%v: the launcher ended %q, the binary alone %q", sig, got, want)
			}
			t.Logf("%v: both ended %q", sig, got)
		}
	})

	t.Run("unsupported platform", func(t *testing.T) {
		preload := filepath.Join(t.TempDir(), "freebsd.cjs")
		if err := os.WriteFile(preload, []byte(`Object.defineProperty(process, "platform", { value: "freebsd" });`+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, errOut, code := n.run(t, t.TempDir(), "node", "--require", preload, n.launcher, "version")
		if code != 1 || !strings.Contains(errOut, "no prebuilt binary for this platform (freebsd-") || !strings.Contains(errOut, "win32-x64") ||
			!strings.Contains(errOut, "go install github.com/agent-rewind/rewind/cli/cmd/agent-rewind@latest") {
			t.Fatalf("launcher on freebsd: exit %d, stderr %q", code, errOut)
		}
	})

	t.Run("platform package missing", func(t *testing.T) {
		// The main package alone, as after npm install --omit=optional.
		alone := filepath.Join(t.TempDir(), "mcp")
		cp := exec.Command("cp", "-R", filepath.Dir(filepath.Dir(n.launcher)), alone)
		if out, err := cp.CombinedOutput(); err != nil {
			t.Fatalf("cp: %v\n%s", err, out)
		}
		_, errOut, code := n.run(t, t.TempDir(), "node", filepath.Join(alone, "bin", "agent-rewind"), "version")
		want := "the package @agent-rewind/mcp-" + host(t).NPMPlatform() + ", which carries the binary"
		if code != 1 || !strings.Contains(errOut, want) || !strings.Contains(errOut, "npm install @agent-rewind/mcp-") {
			t.Fatalf("launcher without its platform package: exit %d, stderr %q", code, errOut)
		}
	})
}

// TestNPMHookBinary: the package carries agent-rewind-hook beside agent-rewind: native after an
// install with scripts, which also links it into the global bin folder, and the node launcher
// without. It is no "bin" entry, so that npx still knows which program to run (a package with
// two bins and none named "mcp" makes `npx -y @agent-rewind/mcp mcp` fail). Through the installed
// package, a guard admits an effect, then refuses it again (needs node and npm).
func TestNPMHookBinary(t *testing.T) {
	n := installNPM(t)
	global := filepath.Join(filepath.Dir(n.global), "agent-rewind-hook")
	launcher := filepath.Join(filepath.Dir(n.launcher), "agent-rewind-hook")
	if startsWith(t, global, "#!") {
		t.Fatalf("%s is still the node launcher after an install with scripts", global)
	}
	if !startsWith(t, launcher, "#!/usr/bin/env node") {
		t.Fatalf("%s: with --ignore-scripts the launcher should have stayed", launcher)
	}
	out, errOut, code := n.run(t, n.project, "npx", "-y", "@agent-rewind/mcp", "--json", "version")
	if code != 0 || !strings.Contains(out, `"version": "v0.3.0-test.1"`) {
		t.Fatalf("npx -y @agent-rewind/mcp --json version: exit %d\n%s%s", code, out, errOut)
	}
	// An effect admitted through the global bin is refused through the launcher: one store.
	ws := t.TempDir()
	effect := `{"key": "npm-hook-test", "payload": {"n": 1}}`
	out, errOut, code = n.run(t, ws, global, "--workspace", ws, "guard", effect)
	if code != 0 || !strings.Contains(out, `admitted "npm-hook-test": spent`) {
		t.Fatalf("agent-rewind-hook guard: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = n.run(t, ws, launcher, "--workspace", ws, "guard", effect)
	if code != 2 || !strings.Contains(errOut, "refused effect npm-hook-test") {
		t.Fatalf("agent-rewind-hook guard again through the launcher: exit %d\n%s%s", code, out, errOut)
	}
	// Anything but the guard: the same answer from the binary and the launcher.
	dir := t.TempDir()
	for _, args := range [][]string{{"version"}, {"--json", "guard", `{"key": "k"`}} {
		bo, be, bc := n.run(t, dir, n.hook, args...)
		lo, le, lc := n.run(t, dir, launcher, args...)
		if bo != lo || be != le || bc != lc || bc == 0 {
			t.Errorf("%v: binary exit %d %q %q; launcher exit %d %q %q", args, bc, bo, be, lc, lo, le)
		}
	}
}

func host(t *testing.T) Target {
	t.Helper()
	ts, err := ParseTargets("host")
	if err != nil {
		t.Fatal(err)
	}
	return ts[0]
}

// signalled starts `name mcp`, waits until the MCP server has answered initialize (so the binary
// is running, behind the launcher if name is one), sends sig to name's process and reports how
// it ended. Reading stdout to its end proves the binary itself is gone too: it holds the pipe.
func signalled(t *testing.T, n *npmInstall, name string, sig syscall.Signal) string {
	t.Helper()
	cmd := exec.Command(name, "mcp")
	cmd.Dir, cmd.Env = t.TempDir(), n.env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	line := make([]byte, 1)
	if _, err := io.ReadFull(stdout, line); err != nil {
		t.Fatalf("%s mcp: no reply to initialize: %v", name, err)
	}
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := io.Copy(io.Discard, stdout); done <- err }()
	select {
	case <-done:
	case <-time.After(30 * time.Second): // a bound for a hung child, not a timing assertion
		t.Fatalf("%s mcp: stdout still open 30s after %v: the binary outlived the signal", name, sig)
	}
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return "signal " + ws.Signal().String()
	}
	return fmt.Sprintf("exit %d (%v)", cmd.ProcessState.ExitCode(), err)
}

// BenchmarkStartup compares a call through the node launcher with the binary run directly
// (`version`, the cheapest command): the launcher's added start-up per call is the difference.
func BenchmarkStartup(b *testing.B) {
	n := installNPM(b)
	for _, c := range []struct {
		name string
		argv []string
	}{{"binary", []string{n.binary, "version"}}, {"launcher", []string{"node", n.launcher, "version"}}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				cmd := exec.Command(c.argv[0], c.argv[1:]...)
				cmd.Env = n.env
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%v: %v\n%s", c.argv, err, out)
				}
			}
		})
	}
}
