package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// uiServer is "agent-rewind ui" running as a child process.
type uiServer struct {
	url  string // with the token
	base string // http://127.0.0.1:PORT
	cmd  *exec.Cmd
}

// startUI runs the binary's ui command for ws and returns once it serves; it is stopped with
// SIGTERM when the test ends.
func startUI(t *testing.T, ws string) *uiServer {
	t.Helper()
	cmd := exec.Command(bin, "--json", "ui", "--no-open")
	cmd.Dir = ws
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("ui did not stop cleanly on SIGTERM: %v", err)
			}
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Error("ui did not stop within 10s of SIGTERM")
		}
	})
	var v struct{ URL string }
	if err := json.NewDecoder(bufio.NewReader(out)).Decode(&v); err != nil {
		t.Fatalf("ui printed no address: %v", err)
	}
	go io.Copy(io.Discard, out)
	u, err := url.Parse(v.URL)
	if err != nil || u.Hostname() != "127.0.0.1" {
		t.Fatalf("ui address %q: not on 127.0.0.1 (%v)", v.URL, err)
	}
	return &uiServer{url: v.URL, base: "http://" + u.Host, cmd: cmd}
}

// browser starts headless Chromium for one test. Without Chromium the test is skipped with the
// way to get it, except under REWIND_CI=1, where it fails: CI must run the browser tests.
func browser(t *testing.T) context.Context {
	t.Helper()
	var exe string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			exe = p
			break
		}
	}
	if exe == "" {
		msg := "no Chromium on PATH (chromium, chromium-browser, google-chrome): the browser tests of the web UI need it; on Debian or Ubuntu: apt-get install chromium"
		if os.Getenv("REWIND_CI") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.NoSandbox,
		chromedp.Headless,
		chromedp.Flag("disable-background-networking", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1440, 900),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelC := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelC(); cancelA() })
	if err := chromedp.Do(bctx); err != nil { // starts the browser, whose life a timeout here would bound
		t.Fatalf("start Chromium %s: %v", exe, err)
	}
	// Generous: the machine may be loaded; a stage that hangs still fails, naming itself.
	ctx, cancelT := context.WithTimeout(bctx, 3*time.Minute)
	t.Cleanup(cancelT)
	return ctx
}

// screenshot saves the page as NAME.png in $REWIND_UI_SCREENSHOTS, when it is set.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("REWIND_UI_SCREENSHOTS")
	if dir == "" {
		return
	}
	var png []byte
	if err := chromedp.Do(ctx, chromedp.Sleep(300*time.Millisecond), into(&png, chromedp.CaptureScreenshot())); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

func putFile(t *testing.T, ws, rel, content string, mode os.FileMode) {
	t.Helper()
	p := filepath.Join(ws, rel)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	os.Chmod(p, mode)
}

func mustRun(t *testing.T, ws string, args ...string) string {
	t.Helper()
	r := run(t, ws, "", args...)
	if r.code != 0 {
		t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
	}
	return r.stdout
}

// session scripts what an agent's session leaves: a start, an edit of a text file, a binary
// file, a mode and a symlink, a rewind to the start, and work on a branch from there. It returns
// the three checkpoints.
func session(t *testing.T, ws string) (start, edit, branch string) {
	putFile(t, ws, "src/app.go", "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n", 0o644)
	putFile(t, ws, "data/blob.bin", "\x00\x01\x02binary", 0o644)
	putFile(t, ws, "run.sh", "#!/bin/sh\necho run\n", 0o644)
	os.Symlink("src/app.go", filepath.Join(ws, "current"))
	start = checkpointID(t, ws, "start: scaffold")
	putFile(t, ws, "src/app.go", "package main\n\nfunc main() {\n\tprintln(\"hello, world\")\n\tprintln(\"bye\")\n}\n", 0o644)
	putFile(t, ws, "data/blob.bin", "\x00\x01\x03binary!", 0o644)
	os.Chmod(filepath.Join(ws, "run.sh"), 0o755)
	os.Remove(filepath.Join(ws, "current"))
	os.Symlink("run.sh", filepath.Join(ws, "current"))
	edit = checkpointID(t, ws, "edit: greet the world")
	mustRun(t, ws, "rewind", start)
	putFile(t, ws, "NOTES.md", "# another way\n", 0o644)
	branch = checkpointID(t, ws, "branch: try another way")
	return start, edit, branch
}

func TestUITimelineAndDiff(t *testing.T) {
	ctx := browser(t)
	ws := t.TempDir()
	start, edit, branch := session(t, ws)
	srv := startUI(t, ws)
	var lanes int
	var unified, split, binary, mode, symlink string
	err := chromedp.Do(ctx,
		chromedp.Navigate(srv.url),
		chromedp.WaitVisible(chromedp.CSS("#row-"+branch)),
		chromedp.WaitVisible(chromedp.CSS("#row-"+edit)),
		chromedp.WaitVisible(chromedp.CSS("#row-"+start)),
		// A branch after the rewind: the graph has two columns.
		into(&lanes, chromedp.Evaluate[int](`new Set([...document.querySelectorAll("svg.graph circle.node:not(.live-node)")].map(c => c.getAttribute("cx"))).size`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	if lanes != 2 {
		t.Fatalf("graph lanes = %d, want 2 (a branch after the rewind)", lanes)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#row-`+start+` button[data-pick="a"]`)),
		chromedp.Click(chromedp.CSS(`#row-`+edit+` button[data-pick="b"]`)),
		chromedp.WaitVisible(chromedp.CSS(`li.file[data-path="src/app.go"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "ui-timeline")
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`li.file[data-path="src/app.go"] a`)),
		chromedp.WaitVisible(chromedp.CSS("#diff-unified")),
		into(&unified, chromedp.Text(chromedp.CSS("#diff-unified"))),
	)
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "ui-diff")
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS("#mode-split")),
		chromedp.WaitVisible(chromedp.CSS("#diff-split")),
		into(&split, chromedp.Text(chromedp.CSS("#diff-split"))),
	)
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "ui-diff-split")
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`li.file[data-path="data/blob.bin"] a`)),
		chromedp.WaitVisible(chromedp.CSS("#show-binary")),
		into(&binary, chromedp.Text(chromedp.CSS("#show-binary"))),
		chromedp.Click(chromedp.CSS(`li.file[data-path="run.sh"] a`)),
		chromedp.WaitVisible(chromedp.CSS("#show-mode")),
		into(&mode, chromedp.Text(chromedp.CSS("#show-mode"))),
		chromedp.Click(chromedp.CSS(`li.file[data-path="current"] a`)),
		chromedp.WaitVisible(chromedp.CSS("#show-symlink")),
		into(&symlink, chromedp.Text(chromedp.CSS("#show-symlink"))),
	)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`println("hello")`, `println("hello, world")`, `println("bye")`} {
		if !strings.Contains(unified, want) || !strings.Contains(split, want) {
			t.Errorf("line diff lacks %q:\nunified: %s\nsplit: %s", want, unified, split)
		}
	}
	if !regexp.MustCompile(`-\s*\tprintln\("hello"\)`).MatchString(unified) || !regexp.MustCompile(`\+\s*\tprintln\("bye"\)`).MatchString(unified) {
		t.Errorf("unified diff does not mark the removed and added lines:\n%s", unified)
	}
	if !strings.Contains(binary, "Binary file") || !strings.Contains(binary, "9 bytes") || !strings.Contains(binary, "10 bytes") {
		t.Errorf("binary file shown as %q", binary)
	}
	if !strings.Contains(mode, "0644") || !strings.Contains(mode, "0755") {
		t.Errorf("mode change shown as %q", mode)
	}
	if !strings.Contains(symlink, "src/app.go") || !strings.Contains(symlink, "run.sh") {
		t.Errorf("symlink change shown as %q", symlink)
	}
}

func TestUIRestoreOneFile(t *testing.T) {
	ctx := browser(t)
	ws := t.TempDir()
	putFile(t, ws, "a.txt", "one\n", 0o644)
	putFile(t, ws, "b.txt", "one\n", 0o644)
	first := checkpointID(t, ws, "first")
	putFile(t, ws, "a.txt", "two\n", 0o644)
	putFile(t, ws, "b.txt", "two\n", 0o644)
	srv := startUI(t, ws)
	var done string
	err := chromedp.Do(ctx,
		chromedp.Navigate(srv.url),
		chromedp.WaitVisible(chromedp.CSS(`input.pickpath[data-path="a.txt"]`)),
		chromedp.Click(chromedp.CSS(`input.pickpath[data-path="a.txt"]`)),
		chromedp.Click(chromedp.CSS("#restore-from-a")),
		chromedp.WaitVisible(chromedp.CSS("#modal-confirm")),
	)
	if err != nil {
		t.Fatal(err)
	}
	// The dry run changed nothing.
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "two\n" {
		t.Fatalf("the dry run changed a.txt: %q", b)
	}
	screenshot(t, ctx, "ui-restore-confirm")
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS("#modal-confirm")),
		chromedp.WaitVisible(chromedp.CSS("#done-text")),
		into(&done, chromedp.Text(chromedp.CSS("#done-text"))),
	)
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "ui-restore-done")
	var status string
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS("#modal-close")),
		chromedp.Click(chromedp.CSS("#tab-chain")),
		chromedp.WaitVisible(chromedp.CSS("#chain-status")),
		into(&status, chromedp.Text(chromedp.CSS("#chain-status"))),
	)
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "ui-chain")
	if !strings.HasPrefix(status, "Verified: all 3 entries intact") {
		t.Errorf("chain status on the page: %q, want 3 entries verified (checkpoint, safety checkpoint, restore)", status)
	}
	a, _ := os.ReadFile(filepath.Join(ws, "a.txt"))
	b, _ := os.ReadFile(filepath.Join(ws, "b.txt"))
	if string(a) != "one\n" || string(b) != "two\n" {
		t.Fatalf("after the restore a.txt=%q b.txt=%q; want one, two (%s)", a, b, done)
	}
	// The auditor's bundle downloads while the page's own chain handle is open.
	resp, err := http.Get(srv.url + "api/export")
	if err != nil {
		t.Fatal(err)
	}
	bundle, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Contains(bundle, []byte("chain.jsonl")) {
		t.Fatalf("export: %d, %d bytes", resp.StatusCode, len(bundle))
	}
	chain := readChain(t, ws)
	if last := chain[len(chain)-1]; last.Kind != "restore" || !strings.Contains(string(last.Data), `"checkpoint":"`+first+`"`) {
		t.Fatalf("last chain entry %s %s, want a restore from %s", last.Kind, last.Data, first)
	}
}

func TestUIRewindMatchesCLI(t *testing.T) {
	ctx := browser(t)
	cli, page := t.TempDir(), t.TempDir()
	startCLI, _, _ := session(t, cli)
	startPage, _, branchPage := session(t, page)
	putFile(t, cli, "NOTES.md", "unsaved\n", 0o600)
	putFile(t, page, "NOTES.md", "unsaved\n", 0o600)
	mustRun(t, cli, "rewind", startCLI)
	srv := startUI(t, page)
	err := chromedp.Do(ctx,
		chromedp.Navigate(srv.url),
		chromedp.WaitVisible(chromedp.CSS("#row-"+startPage+" .rewind-btn")),
		chromedp.Click(chromedp.CSS("#row-"+startPage+" .rewind-btn")),
		chromedp.WaitVisible(chromedp.CSS("#modal-confirm")),
		chromedp.Click(chromedp.CSS("#modal-confirm")),
		chromedp.WaitVisible(chromedp.CSS("#done-text")),
	)
	if err != nil {
		t.Fatal(err)
	}
	if d := treeDiff(readTree(t, cli), readTree(t, page)); d != "" {
		t.Fatalf("the page's rewind left another tree than the CLI's: %s", d)
	}
	out := mustRun(t, page, "--json", "list")
	if !strings.Contains(out, `"current": "`+startPage+`"`) {
		t.Fatalf("position after the page's rewind: %s", out)
	}
	k := kinds(readChain(t, page))
	if k["rewind"] != 2 || k["checkpoint"] < 4 {
		t.Fatalf("chain kinds after the page's rewind: %v (branch %s)", k, branchPage)
	}
}

func TestUIFollowsCLICheckpoint(t *testing.T) {
	ctx := browser(t)
	ws := t.TempDir()
	putFile(t, ws, "a.txt", "one\n", 0o644)
	checkpointID(t, ws, "first")
	srv := startUI(t, ws)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.url), chromedp.WaitVisible(chromedp.CSS(".current-row"))); err != nil {
		t.Fatal(err)
	}
	putFile(t, ws, "a.txt", "two\n", 0o644)
	id := checkpointID(t, ws, "made from the CLI")
	var label string
	wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := chromedp.Do(wctx, chromedp.WaitVisible(chromedp.CSS("#row-"+id)), into(&label, chromedp.Text(chromedp.CSS("#row-"+id+" .label")))); err != nil {
		t.Fatalf("the page did not show checkpoint %s within 15s without a reload: %v", id, err)
	}
	if label != "made from the CLI" {
		t.Fatalf("label %q", label)
	}
}

// TestUIRefusesForeignRequests speaks HTTP to the ui process directly: a request without the
// token, with another Host (DNS rebinding), a POST without the CSRF token, or from another
// origin is refused; a path leaving the workspace is refused like a rewind's; and the same
// POST from the page's origin with its token is accepted (the control).
func TestUIRefusesForeignRequests(t *testing.T) {
	ws := t.TempDir()
	putFile(t, ws, "a.txt", "one\n", 0o644)
	id := checkpointID(t, ws, "first")
	putFile(t, ws, "a.txt", "two\n", 0o644)
	srv := startUI(t, ws)
	do := func(method, u string, hdr map[string]string, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, u, strings.NewReader(body))
		for k, v := range hdr {
			if k == "Host" {
				req.Host = v
			} else {
				req.Header.Set(k, v)
			}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, pageHTML := do("GET", srv.url, nil, "")
	m := regexp.MustCompile(`name="csrf" content="([0-9a-f]+)"`).FindStringSubmatch(pageHTML)
	if code != 200 || m == nil {
		t.Fatalf("page: %d, no CSRF token in it", code)
	}
	csrf := m[1]
	restore := fmt.Sprintf(`{"checkpoint":%q,"paths":["a.txt"],"dryRun":true}`, id)
	same := map[string]string{"X-Rewind-CSRF": csrf, "Origin": srv.base, "Content-Type": "application/json"}
	cases := []struct {
		name, method, url string
		hdr               map[string]string
		body              string
		want              int
	}{
		{"no token", "GET", srv.base + "/api/timeline", nil, "", 403},
		{"wrong token", "GET", srv.base + "/0000000000000000000000000000000000000000000000000/api/timeline", nil, "", 403},
		{"DNS rebinding", "GET", srv.url + "api/timeline", map[string]string{"Host": "attacker.example:" + strings.Split(srv.base, ":")[2]}, "", 400},
		{"localhost name", "GET", srv.url + "api/timeline", map[string]string{"Host": "localhost"}, "", 400},
		{"POST without CSRF", "POST", srv.url + "api/restore", map[string]string{"Origin": srv.base}, restore, 403},
		{"cross-origin POST", "POST", srv.url + "api/restore", map[string]string{"X-Rewind-CSRF": csrf, "Origin": "http://attacker.example"}, restore, 403},
		{"cross-site fetch", "POST", srv.url + "api/restore", map[string]string{"X-Rewind-CSRF": csrf, "Sec-Fetch-Site": "cross-site"}, restore, 403},
		{"GET cannot restore", "GET", srv.url + "api/restore", nil, "", 405},
		{"path outside", "POST", srv.url + "api/restore", same, fmt.Sprintf(`{"checkpoint":%q,"paths":["../etc"],"dryRun":true}`, id), 400},
		{"file outside", "GET", srv.url + "api/file?a=" + id + "&b=live&path=../../etc/passwd", nil, "", 400},
		{"same origin with token", "POST", srv.url + "api/restore", same, restore, 200},
	}
	for _, c := range cases {
		code, body := do(c.method, c.url, c.hdr, c.body)
		if code != c.want {
			t.Errorf("%s: %d %s, want %d", c.name, code, strings.TrimSpace(body), c.want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "two\n" {
		t.Fatalf("a refused or dry-run request changed a.txt: %q", b)
	}
}

// stage runs one named part of a browser test, failing the test with that name on an error.
func stage(t *testing.T, ctx context.Context, name string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// into runs a that returns a value and keeps the value in dst, so it can be one step of chromedp.Do.
func into[T any](dst *T, a chromedp.Action[T]) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		v, err := a(ctx, t)
		*dst = v
		return chromedp.Void{}, err
	}
}

// TestUICommandAsDocumented runs "agent-rewind ui" and "agent-rewind ui --port N --no-open" as
// README.md and docs/ui.md show them (with no desktop, so no browser is opened): each prints the
// address, which serves the page, and stops on SIGTERM.
func TestUICommandAsDocumented(t *testing.T) {
	ws := t.TempDir()
	putFile(t, ws, "a.txt", "one\n", 0o644)
	checkpointID(t, ws, "first")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	for _, args := range [][]string{{"ui"}, {"ui", "--port", strconv.Itoa(port), "--no-open"}} {
		cmd := exec.Command(bin, args...)
		cmd.Dir = ws
		cmd.Env = append(os.Environ(), "DISPLAY=", "WAYLAND_DISPLAY=")
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		var addr string
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "open "); ok {
				addr = a
				break
			}
		}
		go io.Copy(io.Discard, out)
		if len(args) > 1 && !strings.HasPrefix(addr, fmt.Sprintf("http://127.0.0.1:%d/", port)) {
			t.Errorf("%v printed the address %q, want port %d", args, addr, port)
		}
		resp, err := http.Get(addr)
		if err == nil {
			resp.Body.Close()
		}
		if err != nil || resp.StatusCode != 200 {
			t.Errorf("%v: GET %q: %v", args, addr, err)
		}
		cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Errorf("%v: exit after SIGTERM: %v", args, err)
		}
	}
}

// TestUIEffectsRelease: an effect admitted and then refused by the guard shows on the page with
// its refusal; releasing it from the page needs a reason, and records a "release" entry by "ui".
func TestUIEffectsRelease(t *testing.T) {
	ctx := browser(t)
	ws := t.TempDir()
	putFile(t, ws, "a.txt", "one\n", 0o644)
	checkpointID(t, ws, "first")
	effect := `{"key": "invoice-42-charge", "payload": {"amount": 4900}, "description": "charge invoice 42"}`
	if r := run(t, ws, "", "guard", effect); r.code != 0 {
		t.Fatalf("first guard: %d %s", r.code, r.stderr)
	}
	if r := run(t, ws, "", "guard", effect); r.code != 2 {
		t.Fatalf("second guard: %d, want 2 (refused)", r.code)
	}
	srv := startUI(t, ws)
	var row, errText string
	// The page's first load done (body[data-version] is set after every panel loaded), then the
	// tab: a click before the page has its data races the first render on a loaded machine.
	stage(t, ctx, "open the effects tab",
		chromedp.Navigate(srv.url),
		chromedp.WaitReady(chromedp.CSS("body[data-version]")),
		chromedp.Click(chromedp.CSS("#tab-effects")),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-key="invoice-42-charge"]`)),
		into(&row, chromedp.Text(chromedp.CSS(`tr[data-key="invoice-42-charge"]`))),
	)
	stage(t, ctx, "release without a reason",
		chromedp.Click(chromedp.CSS(`tr[data-key="invoice-42-charge"] button`)),
		chromedp.WaitVisible(chromedp.CSS("#release-confirm")),
		chromedp.Click(chromedp.CSS("#release-confirm")),
		chromedp.WaitVisible(chromedp.CSS("#modal .error")),
		into(&errText, chromedp.Text(chromedp.CSS("#modal .error"))),
	)
	stage(t, ctx, "release with a reason",
		chromedp.SendKeys(chromedp.CSS("#release-reason"), "the charge was refunded"),
		chromedp.Click(chromedp.CSS("#release-confirm")),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-key="invoice-42-charge"] .state-released`)),
	)
	if !strings.Contains(row, "spent") || !strings.Contains(row, "charge invoice 42") || !regexp.MustCompile(`\t1\t`).MatchString(row) {
		t.Errorf("effects row %q: want state spent, the description and 1 refusal", row)
	}
	if !strings.Contains(errText, "reason is required") {
		t.Errorf("release without a reason: %q", errText)
	}
	chain := readChain(t, ws)
	last := chain[len(chain)-1]
	if last.Kind != "release" || !strings.Contains(string(last.Data), `"the charge was refunded"`) || !strings.Contains(string(last.Data), `"ui"`) {
		t.Fatalf("last chain entry %s %s, want the page's release", last.Kind, last.Data)
	}
}

// TestUISavingsOverTime: the receipt's hourly history is drawn as a line chart, labelled as
// replay savings only.
func TestUISavingsOverTime(t *testing.T) {
	ctx := browser(t)
	ws := t.TempDir()
	putFile(t, ws, "a.txt", "one\n", 0o644)
	checkpointID(t, ws, "first")
	receipt := `{"kind":"agent-rewind/savings/v1","replayed_calls":40,"avoided_tokens":{"input":4000,"output":900,"cache_read":90000,"cache_write":0},
"avoided_cost_usd":0.412,"unpriced_calls":0,"by_model":{"claude-sonnet-5-5":{"replayed_calls":40,"avoided_tokens":{"input":4000,"output":900,"cache_read":90000,"cache_write":0},"avoided_cost_usd":0.412,"priced":true}},
"prices":{"source":"test","date":"2026-11-30"},"updated":"2026-11-30T18:20:00Z",
"history":[{"hour":"2026-11-30T09:00:00Z","replayed_calls":3,"avoided_cost_usd":0.031},{"hour":"2026-11-30T10:00:00Z","replayed_calls":9,"avoided_cost_usd":0.094},
{"hour":"2026-11-30T13:00:00Z","replayed_calls":21,"avoided_cost_usd":0.2},{"hour":"2026-11-30T18:00:00Z","replayed_calls":40,"avoided_cost_usd":0.412}]}`
	if err := os.WriteFile(filepath.Join(stateDir(t, ws), "savings.json"), []byte(receipt), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startUI(t, ws)
	var label, points string
	err := chromedp.Do(ctx,
		chromedp.Navigate(srv.url+"#savings"),
		chromedp.WaitVisible(chromedp.CSS("#savings-chart")),
		into(&label, chromedp.TextContent(chromedp.CSS("#savings-chart-label"))),
		into(&points, chromedp.Evaluate[string](`document.querySelector("#savings-chart polyline").getAttribute("points")`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "ui-savings")
	if !strings.Contains(label, "replay savings only") {
		t.Errorf("chart label %q does not say replay savings only", label)
	}
	if n := len(strings.Fields(points)); n != 4 {
		t.Errorf("polyline %q: %d points, want the receipt's 4 hours", points, n)
	}
}
