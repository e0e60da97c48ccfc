package main

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// TestNPMWindowsPackage builds the windows/amd64 release with the release tool's own code (the
// .zip, and the npm packages), installs @agent-rewind/mcp and @agent-rewind/mcp-win32-x64 from
// their tarballs into a project, and runs the launchers as node runs them on Windows: a preload
// (testdata/win32.cjs) makes node say win32-x64 and runs the .exe it spawns under Wine, the
// launcher's own code choosing the file, the arguments, the streams and the exit status. Through
// it the real agent-rewind.exe and agent-rewind-hook.exe answer as they do run directly under
// Wine. Needs node, npm and Wine (tools/wine/run); skips without them unless REWIND_CI=1.
func TestNPMWindowsPackage(t *testing.T) {
	endToEnd(t)
	for _, tool := range []string{"node", "npm"} {
		_, err := exec.LookPath(tool)
		requireTool(t, tool, err)
	}
	_, err := exec.LookPath("wine64")
	if err != nil {
		_, err = os.Stat("/usr/lib/wine/wine64") // where tools/wine/run also looks
	}
	requireTool(t, "Wine (apt-get install wine64)", err)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	wine := filepath.Join(root, "tools", "wine", "run")
	preload, err := filepath.Abs(filepath.Join("testdata", "win32.cjs"))
	if err != nil {
		t.Fatal(err)
	}
	win := Target{"windows", "amd64"}
	tmp := t.TempDir()
	o := Options{Root: root, Out: filepath.Join(tmp, "dist"), Version: "v0.3.0-test.1", Commit: "0123456789abcdef", Targets: []Target{win}, Log: io.Discard}
	bins, err := Build(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}

	// The release file: one .zip, in SHA256SUMS, holding the two programs under their .exe names.
	sums, err := os.ReadFile(filepath.Join(o.Out, "SHA256SUMS"))
	if err != nil || !strings.HasSuffix(string(sums), "  agent-rewind-v0.3.0-test.1-windows-amd64.zip\n") || strings.Count(string(sums), "\n") != 1 {
		t.Fatalf("SHA256SUMS: %q (%v)", sums, err)
	}
	zr, err := zip.OpenReader(bins[win].Archive)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	zr.Close()
	if !slices.Equal(names, []string{"agent-rewind.exe", "agent-rewind-hook.exe"}) {
		t.Fatalf("%s holds %v", bins[win].Archive, names)
	}
	exe, hook, err := bins[win].Read(win)
	if err != nil {
		t.Fatal(err)
	}

	tarballs, err := Pack(t.Context(), o, bins)
	if err != nil {
		t.Fatal(err)
	}
	if len(tarballs) != 2 {
		t.Fatalf("packed %v, want the main package and win32-x64's", tarballs)
	}
	pkg := packageJSON(t, tarballs[1])
	if pkg["name"] != "@agent-rewind/mcp-win32-x64" || fmt.Sprint(pkg["os"]) != "[win32]" || fmt.Sprint(pkg["cpu"]) != "[x64]" {
		t.Fatalf("%s: package.json %v", tarballs[1], pkg)
	}
	// The package carries the very bytes of the release .zip.
	if !bytes.Equal(tarballFile(t, tarballs[1], "package/bin/agent-rewind.exe"), exe) || !bytes.Equal(tarballFile(t, tarballs[1], "package/bin/agent-rewind-hook.exe"), hook) {
		t.Fatal("the win32-x64 package's binaries are not the release .zip's")
	}

	// npm installs a package for another os only when forced; the main package's other optional
	// dependencies are not found (no registry) and skipped, as on a user's machine.
	project := filepath.Join(tmp, "project")
	env := append(os.Environ(),
		"npm_config_registry=http://"+closedPort(t)+"/", "npm_config_offline=true", "npm_config_fetch_retries=0",
		"npm_config_cache="+filepath.Join(tmp, "npm-cache"), "npm_config_userconfig="+filepath.Join(tmp, "npmrc"),
		"npm_config_update_notifier=false", "npm_config_fund=false", "npm_config_audit=false",
		"REWIND_WINE_RUN="+wine)
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	install := exec.Command("npm", append([]string{"install", "--force", "--ignore-scripts", "--prefix", project}, tarballs...)...)
	install.Dir, install.Env = tmp, env
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("npm install: %v\n%s", err, out)
	}
	mcp := filepath.Join(project, "node_modules", "@agent-rewind", "mcp")
	run := func(t *testing.T, argv ...string) (stdout, stderr string, code int) {
		t.Helper()
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir, cmd.Env = t.TempDir(), env
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		if err := cmd.Run(); err != nil && cmd.ProcessState == nil {
			t.Fatalf("%v: %v", argv, err)
		}
		return o.String(), wineless(e.String()), cmd.ProcessState.ExitCode()
	}

	t.Run("install script leaves the launchers", func(t *testing.T) {
		// On Windows npm's shims run `node bin/agent-rewind`: install.js must not put a binary there.
		_, errOut, code := run(t, "node", "--require", preload, filepath.Join(mcp, "install.js"))
		if code != 0 || errOut != "" {
			t.Fatalf("install.js on win32: exit %d, %q", code, errOut)
		}
		for _, name := range []string{"agent-rewind", "agent-rewind-hook"} {
			if !startsWith(t, filepath.Join(mcp, "bin", name), "#!/usr/bin/env node") {
				t.Errorf("bin/%s is no longer the node launcher after install.js on win32", name)
			}
		}
	})

	t.Run("launcher runs the exe", func(t *testing.T) {
		out, errOut, code := run(t, "node", "--require", preload, filepath.Join(mcp, "bin", "agent-rewind"), "--json", "version")
		var v struct{ Version, Commit string }
		if code != 0 || json.Unmarshal([]byte(out), &v) != nil || v.Version != "v0.3.0-test.1" || v.Commit != "0123456789abcdef" {
			t.Fatalf("agent-rewind --json version through the launcher: exit %d, %q %q", code, out, errOut)
		}
		// The same outputs and exit status as the exe run directly (under Wine), errors included.
		pkgBin := filepath.Join(project, "node_modules", "@agent-rewind", "mcp-win32-x64", "bin")
		for _, c := range []struct {
			name string
			args []string
		}{{"agent-rewind", []string{"no-such-command"}}, {"agent-rewind", []string{"--json", "version"}}, {"agent-rewind-hook", []string{"version"}}} {
			bo, be, bc := run(t, append([]string{wine, filepath.Join(pkgBin, c.name+".exe")}, c.args...)...)
			lo, le, lc := run(t, append([]string{"node", "--require", preload, filepath.Join(mcp, "bin", c.name)}, c.args...)...)
			if bo != lo || be != le || bc != lc {
				t.Errorf("%s %v: exe exit %d %q %q; launcher exit %d %q %q", c.name, c.args, bc, bo, be, lc, lo, le)
			}
			t.Logf("%s %v: exit %d through both", c.name, c.args, bc)
		}
	})

	t.Run("interrupt waits for the binary", func(t *testing.T) {
		// A Windows console hands Ctrl-C to each of its processes, the binary's too. Here the
		// launcher alone gets SIGINT: it must neither die of it nor pass it on (child.kill ends a
		// program at once on Windows). The server still answers after it, and once its input ends
		// the launcher exits as the binary does.
		cmd := exec.Command("node", "--require", preload, filepath.Join(mcp, "bin", "agent-rewind"), "mcp")
		cmd.Dir, cmd.Env = t.TempDir(), append(env, "REWIND_STATE_DIR="+t.TempDir())
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Process.Kill()
		replies := bufio.NewReader(stdout)
		fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		if line, err := replies.ReadString('\n'); err != nil || !strings.Contains(line, `"id":1`) {
			t.Fatalf("no reply to initialize: %q, %v\n%s", line, err, stderr.String())
		}
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
		if line, err := replies.ReadString('\n'); err != nil || !strings.Contains(line, `"id":2`) {
			t.Fatalf("no reply to a ping after the interrupt: %q, %v\n%s", line, err, stderr.String())
		}
		stdin.Close()
		io.Copy(io.Discard, replies)
		err = cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			t.Fatalf("the launcher died of %v instead of waiting for the binary\n%s", ws.Signal(), stderr.String())
		}
		if err != nil {
			t.Fatalf("agent-rewind mcp through the launcher, input closed: %v\n%s", err, stderr.String())
		}
	})

	t.Run("npm's shims run the launcher", func(t *testing.T) {
		// The shims npm writes on Windows, by npm's own cmd-shim: agent-rewind.cmd (cmd),
		// agent-rewind.ps1 (PowerShell) and agent-rewind (Git Bash's sh). Each runs node on the
		// launcher, from its "#!/usr/bin/env node" line; the sh one is run here as Git Bash runs it.
		npmRoot, err := exec.Command("npm", "root", "-g").Output()
		if err != nil {
			t.Fatal(err)
		}
		cmdShim := filepath.Join(strings.TrimSpace(string(npmRoot)), "npm", "node_modules", "cmd-shim")
		_, err = os.Stat(cmdShim)
		requireTool(t, "npm's cmd-shim", err)
		shim := filepath.Join(project, "node_modules", ".bin-win", "agent-rewind")
		script := fmt.Sprintf("require(%q)(%q, %q).catch((e) => { console.error(e); process.exit(1); })", cmdShim, filepath.Join(mcp, "bin", "agent-rewind"), shim)
		if out, errOut, code := run(t, "node", "-e", script); code != 0 {
			t.Fatalf("cmd-shim: exit %d\n%s%s", code, out, errOut)
		}
		for _, f := range []string{shim + ".cmd", shim + ".ps1", shim} {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), "node") || !strings.Contains(strings.ReplaceAll(string(b), `\`, "/"), "@agent-rewind/mcp/bin/agent-rewind") {
				t.Errorf("%s does not run node on the launcher:\n%s", f, b)
			}
		}
		env := append(env, "NODE_OPTIONS=--require "+preload)
		cmd := exec.Command("sh", shim, "--json", "version")
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil || !strings.Contains(string(out), `"version": "v0.3.0-test.1"`) {
			t.Fatalf("sh %s --json version: %v\n%s", shim, err, out)
		}
	})
}

// wineless drops from a program's standard error the lines Wine itself writes there ("wine client
// error:1e0: sendmsg: Bad file descriptor", now and then, as a program exits): they are not the
// program's, and come and go from one run to the next.
func wineless(stderr string) string {
	var keep []string
	for _, line := range strings.SplitAfter(stderr, "\n") {
		if !strings.HasPrefix(line, "wine client error:") && !strings.HasPrefix(line, "wine: ") {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "")
}
