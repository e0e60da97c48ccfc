package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestUIAnswersWhatIsWrong: the page's API answers a path below a symlink (in the workspace,
// leaving it or staying inside, or in a checkpoint), a missing path, and a request that lacks
// what it needs with a 4xx that names what is wrong, never a 500 nor "no such checkpoint" for a
// path; the same paths through restore (the page's and the CLI's) say the same.
func TestUIAnswersWhatIsWrong(t *testing.T) {
	ws := t.TempDir()
	putFile(t, ws, "real/f.txt", "one\n", 0o644)
	os.Symlink("real", filepath.Join(ws, "link"))
	os.Symlink("/etc", filepath.Join(ws, "out"))
	id := checkpointID(t, ws, "first")
	os.Symlink("real", filepath.Join(ws, "later")) // in the workspace only
	os.Symlink("/etc", filepath.Join(ws, "away"))
	srv := startUI(t, ws)
	do := func(method, u, body string, hdr map[string]string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, u, strings.NewReader(body))
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	_, page := do("GET", srv.url, "", nil)
	m := regexp.MustCompile(`name="csrf" content="([0-9a-f]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no CSRF token in the page")
	}
	post := map[string]string{"X-Rewind-CSRF": m[1], "Origin": srv.base, "Content-Type": "application/json"}
	file := func(q string) string { return srv.url + "api/file?" + q }
	restore := func(paths string) string {
		return fmt.Sprintf(`{"checkpoint":%q,"paths":%s,"dryRun":true}`, id, paths)
	}
	for _, c := range []struct {
		name, method, url, body string
		want                    int
		says                    string
	}{
		{"below a symlink inside, live", "GET", file("a=" + id + "&b=live&path=link/f.txt"), "", 400, `"link/f.txt" passes through link, a symlink in`},
		{"below a symlink inside, checkpoints", "GET", file("a=" + id + "&b=" + id + "&path=link/f.txt"), "", 400, "a symlink in checkpoint " + id},
		{"below a live symlink inside", "GET", file("a=" + id + "&b=live&path=later/f.txt"), "", 400, `"later/f.txt" passes through later, a symlink in the workspace`},
		{"below a live symlink leaving", "GET", file("a=" + id + "&b=live&path=away/passwd"), "", 400, `"away/passwd" passes through away, a symlink in the workspace`},
		{"below a symlink leaving", "GET", file("a=" + id + "&b=live&path=out/passwd"), "", 400, `"out/passwd" passes through out, a symlink`},
		{"missing path", "GET", file("a=" + id + "&b=live&path=nope.txt"), "", 404, `no such path: "nope.txt" is neither in checkpoint ` + id + " nor in the live workspace"},
		{"below a file", "GET", file("a=" + id + "&b=live&path=real/f.txt/x"), "", 400, `"real/f.txt/x" passes through real/f.txt, a file in`},
		{"no path", "GET", file("a=" + id + "&b=live"), "", 400, "/api/file needs path="},
		{"no checkpoint", "GET", file("path=real/f.txt&b=live"), "", 400, "/api/file needs a="},
		{"diff without a", "GET", srv.url + "api/diff?b=live", "", 400, "/api/diff needs a="},
		{"restore a missing path", "POST", srv.url + "api/restore", restore(`["nope.txt"]`), 404, `no such path: "nope.txt" is neither in checkpoint`},
		{"restore below a symlink", "POST", srv.url + "api/restore", restore(`["link/f.txt"]`), 400, `"link/f.txt" passes through link, a symlink`},
		{"restore without a checkpoint", "POST", srv.url + "api/restore", `{"paths":["real/f.txt"],"dryRun":true}`, 400, "names no checkpoint"},
		{"rewind without a checkpoint", "POST", srv.url + "api/rewind", `{"dryRun":true}`, 400, "names no checkpoint"},
		{"the control", "GET", file("a=" + id + "&b=live&path=real/f.txt"), "", 200, `"show":"same"`},
	} {
		hdr := map[string]string(nil)
		if c.method == "POST" {
			hdr = post
		}
		code, body := do(c.method, c.url, c.body, hdr)
		var e struct{ Error string }
		if code != 200 && json.Unmarshal([]byte(body), &e) == nil {
			body = e.Error
		}
		if code != c.want || !strings.Contains(body, c.says) || (code != 200 && strings.Contains(body, "no such checkpoint")) {
			t.Errorf("%s: %d %s; want %d saying %q", c.name, code, strings.TrimSpace(body), c.want, c.says)
		}
	}
	for _, c := range []struct{ path, says string }{
		{"nope.txt", `no such path: "nope.txt" is neither in checkpoint`},
		{"link/f.txt", `"link/f.txt" passes through link, a symlink in the workspace`},
	} {
		if r := run(t, ws, "", "restore", id, "--", c.path); r.code != 1 || !strings.Contains(r.stderr, c.says) || strings.Contains(r.stderr, "no such checkpoint") {
			t.Errorf("agent-rewind restore -- %s: %d %q", c.path, r.code, r.stderr)
		}
	}
}
