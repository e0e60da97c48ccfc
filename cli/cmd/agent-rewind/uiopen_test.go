//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/agent-rewind/rewind/cli/internal/trust/trusttest"
)

// How "agent-rewind ui" opens the browser on a desktop: the page's token (and with it its CSRF
// token) must never be in a process's arguments, which every local user can read.

// tokenInArguments returns a process whose command line holds secret, if one does.
func tokenInArguments(t *testing.T, secret string) string {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), secret) {
			return filepath.Base(filepath.Dir(p)) + ": " + strings.ReplaceAll(string(b), "\x00", " ")
		}
	}
	return ""
}

// startDesktopUI runs "agent-rewind --json ui" as on a desktop (DISPLAY set), with xdg-open the
// script given, and returns the page's address and token; SIGTERM stops it at the end.
func startDesktopUI(t *testing.T, ws, xdgOpen string) (*exec.Cmd, string, string) {
	t.Helper()
	fake := t.TempDir()
	writeFile(t, filepath.Join(fake, "xdg-open"), "#!/bin/sh\n"+xdgOpen)
	os.Chmod(filepath.Join(fake, "xdg-open"), 0o755)
	cmd := exec.Command(bin, "--json", "ui")
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), "PATH="+fake+":"+os.Getenv("PATH"), "DISPLAY=:99", "XDG_RUNTIME_DIR=")
	cmd.Stderr = os.Stderr
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() })
	var v struct{ URL string }
	if err := json.NewDecoder(bufio.NewReader(out)).Decode(&v); err != nil {
		t.Fatalf("ui printed no address: %v", err)
	}
	go io.Copy(io.Discard, out)
	u, err := url.Parse(v.URL)
	if err != nil {
		t.Fatal(err)
	}
	token := strings.Trim(u.Path, "/")
	if len(token) < 32 {
		t.Fatalf("ui address %q: no token", v.URL)
	}
	return cmd, v.URL, token
}

// A real browser (headless Chromium, started by xdg-open) reaches the page from the launch
// file; while it runs, no process's arguments hold the token; the launch file, 0600 in a 0700
// folder, goes once the page is served.
func TestUIOpensTheBrowserWithoutTheToken(t *testing.T) {
	chromium := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			chromium = p
			break
		}
	}
	if chromium == "" {
		if os.Getenv("REWIND_CI") == "1" {
			t.Fatal("no Chromium on PATH (REWIND_CI=1): apt-get install chromium")
		}
		t.Skip("no Chromium on PATH: apt-get install chromium")
	}
	ws := t.TempDir()
	putFile(t, ws, "a.txt", "a\n", 0o644)
	mustRun(t, ws, "checkpoint", "one")
	log, dom, done := filepath.Join(t.TempDir(), "args"), filepath.Join(t.TempDir(), "dom"), filepath.Join(t.TempDir(), "done")
	script := `printf '%s\n' "$@" > ` + log + `
stat -c '%a %u' "$1" "$(dirname "$1")" >> ` + log + `
` + chromium + ` --headless --no-sandbox --disable-gpu --user-data-dir=` + t.TempDir() + ` --dump-dom "file://$1" > ` + dom + ` 2>/dev/null
touch ` + done + `
`
	_, _, token := startDesktopUI(t, ws, script)
	var launch string
	waitFor(t, "the browser to reach the page", func() bool {
		if p := tokenInArguments(t, token); p != "" {
			t.Fatalf("a process's arguments hold the page's token: %s", p)
		}
		b, _ := os.ReadFile(dom)
		if launch == "" {
			if a, _ := os.ReadFile(log); strings.Count(string(a), "\n") >= 3 {
				launch = strings.SplitN(string(a), "\n", 2)[0]
			}
		}
		_, err := os.Stat(launch)
		return launch != "" && os.IsNotExist(err) && strings.Contains(string(b), "agent-rewind")
	})
	waitFor(t, "Chromium to exit", func() bool { _, err := os.Stat(done); return err == nil })
	a, _ := os.ReadFile(log)
	lines := strings.Split(strings.TrimSpace(string(a)), "\n")
	uid := strconv.Itoa(os.Getuid())
	if len(lines) != 3 || lines[1] != "600 "+uid || lines[2] != "700 "+uid || strings.Contains(lines[0], token) {
		t.Fatalf("xdg-open was given %q: want a launch file of mode 600 in a folder of mode 700, both the user's", lines)
	}
	if _, err := os.Stat(filepath.Dir(launch)); !os.IsNotExist(err) {
		t.Fatalf("the launch file's folder is still there: %v", err)
	}
}

// No browser comes (xdg-open opens nothing): the launch file stays, readable by no other user,
// until the server stops, which removes it.
func TestUILaunchFileIsPrivate(t *testing.T) {
	ws := t.TempDir()
	putFile(t, ws, "a.txt", "a\n", 0o644)
	mustRun(t, ws, "checkpoint", "one")
	log := filepath.Join(t.TempDir(), "args")
	cmd, addr, token := startDesktopUI(t, ws, `printf '%s\n' "$@" > `+log+"\n")
	var launch string
	waitFor(t, "xdg-open to be run", func() bool {
		b, _ := os.ReadFile(log)
		launch = strings.TrimSpace(string(b))
		return launch != ""
	})
	if strings.Contains(launch, token) {
		t.Fatalf("xdg-open was given the token: %q", launch)
	}
	b, err := os.ReadFile(launch)
	if err != nil || !strings.Contains(string(b), addr) {
		t.Fatalf("the launch file %s: %v\n%s", launch, err, b)
	}
	if p := tokenInArguments(t, token); p != "" {
		t.Fatalf("a process's arguments hold the page's token: %s", p)
	}
	if os.Getuid() == 0 { // a real other user tries to read it
		uid, gid := trusttest.Other(t)
		r := collect(t, trusttest.Command(uid, gid, "cat", launch))
		if r.code == 0 || strings.Contains(r.stdout, token) {
			t.Fatalf("another user read the launch file: %+v", r)
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	if _, err := os.Stat(filepath.Dir(launch)); !os.IsNotExist(err) {
		t.Fatalf("the launch file's folder outlived the server: %v", err)
	}
}
