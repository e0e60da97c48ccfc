package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/tools/mockanthropic"
)

// childEnv is this process's environment without REWIND_* settings, plus extra.
func childEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "REWIND_") && !strings.HasPrefix(kv, "REWIND_STATE_DIR=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// runEnv runs the binary in dir with args and the environment extra.
func runEnv(t *testing.T, dir string, extra []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = childEnv(extra...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Minute): // a gateway that started listening instead of failing
		cmd.Process.Kill()
		<-done
		t.Fatalf("%v did not exit; stderr:\n%s", args, errb.String())
	}
	code := 0
	var xe *exec.ExitError
	if errors.As(err, &xe) {
		code = xe.ExitCode()
	} else if err != nil {
		t.Fatalf("run %v: %v", args, err)
	}
	return result{out.String(), errb.String(), code}
}

// gatewayProc is a running "agent-rewind gateway".
type gatewayProc struct {
	url    string
	cmd    *exec.Cmd
	stderr *syncBuf
	stdout *syncBuf
	done   chan error
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startGatewayProc starts the gateway on a free port (--port 0) in dir and waits for the
// address line.
func startGatewayProc(t *testing.T, dir string, extra []string, args ...string) *gatewayProc {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"gateway", "--port", "0"}, args...)...)
	cmd.Dir = dir
	cmd.Env = childEnv(extra...)
	pr, pw := io.Pipe()
	g := &gatewayProc{cmd: cmd, stderr: &syncBuf{}, stdout: &syncBuf{}, done: make(chan error, 1)}
	cmd.Stderr = io.MultiWriter(g.stderr, pw)
	cmd.Stdout = g.stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { g.done <- cmd.Wait(); pw.Close() }()
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if addr, ok := strings.CutPrefix(sc.Text(), "agent-rewind gateway: listening on "); ok {
				found <- addr
			}
		}
		close(found)
	}()
	select {
	case addr, ok := <-found:
		if !ok {
			t.Fatalf("the gateway exited before listening:\n%s", g.stderr.String())
		}
		g.url = addr
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatalf("the gateway did not print its address:\n%s", g.stderr.String())
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
		}
	})
	return g
}

// stop sends SIGTERM and returns the exit code.
func (g *gatewayProc) stop(t *testing.T) int {
	t.Helper()
	g.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-g.done:
		var xe *exec.ExitError
		if errors.As(err, &xe) {
			return xe.ExitCode()
		}
		return 0
	case <-time.After(time.Minute):
		g.cmd.Process.Kill()
		t.Fatalf("the gateway did not stop on SIGTERM:\n%s", g.stderr.String())
		return -1
	}
}

func postMessages(t *testing.T, base, body string, headers ...string) (int, http.Header, []byte) {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/v1/messages", strings.NewReader(body))
	req.Header.Set("x-api-key", "sk-ant-e2e")
	req.Header.Set("anthropic-version", "2023-06-01")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

const e2eBody = `{"model":"claude-sonnet-5-5","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"e2e"}]}`

// TestGatewayStartupFailures: every invalid configuration fails with exit 1 (or kong's usage
// code for a flag it does not know) and a message naming the culprit, before listening.
func TestGatewayStartupFailures(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	unknown := write("unknown.json", `{"profile":"lean","colour":"blue"}`)
	null := write("null.json", `{"upstream":null}`)
	cursor := write("cursor.json", `{"storage":"sqlite","replayCursor":"c1"}`)
	key := "REWIND_STORAGE_KEY=" + strings.Repeat("ab", 32)
	cases := []struct {
		name string
		env  []string
		args []string
		code int
		want string
	}{
		{"duplicate flag", nil, []string{"--port", "1", "--port", "2"}, 1, "given twice"},
		{"conflicting pair", nil, []string{"--preserve-cache", "--no-preserve-cache"}, 1, "conflicts with --preserve-cache"},
		{"record-only with replay-cursor", nil, []string{"--storage", "sqlite", "--record-only", "--replay-cursor", "c"}, 1, "conflicts with --replay-cursor"},
		{"unknown flag", nil, []string{"--colour", "blue"}, 80, "unknown flag --colour"},
		{"unknown file field", nil, []string{"--config", unknown}, 1, `unknown field "colour"`},
		{"explicit null", []string{"REWIND_CONFIG=" + null}, nil, 1, "explicit null"},
		{"missing value", nil, []string{"--upstream"}, 80, "--upstream"},
		{"empty value", nil, []string{"--tenant="}, 1, "empty"},
		{"boolean not exactly true", []string{"REWIND_PRESERVE_CACHE=yes"}, nil, 1, "exactly true or false"},
		{"upstream not http", nil, []string{"--upstream", "ftp://example.com"}, 1, "http:// or https://"},
		{"upstream with a path", nil, []string{"--upstream", "https://example.com/v1"}, 1, "root path"},
		{"upstream with credentials", []string{"REWIND_UPSTREAM=https://u:p@example.com"}, nil, 1, "credentials"},
		{"upstream with a query", nil, []string{"--upstream", "https://example.com?x=1"}, 1, "query"},
		{"upstream with a fragment", nil, []string{"--upstream", "https://example.com#f"}, 1, "fragment"},
		{"replay cursor without sqlite", nil, []string{"--replay-cursor", "c1"}, 1, "add --storage sqlite"},
		{"record-only without sqlite", nil, []string{"--record-only"}, 1, "add --storage sqlite"},
		{"profile max", nil, []string{"--profile", "max"}, 1, "not available: observation retrieval and its shaping guarantees are not implemented; use lean"},
		{"non-loopback bind", nil, []string{"--host", "0.0.0.0"}, 1, "--allow-remote"},
		{"sqlite without a key", nil, []string{"--storage", "sqlite"}, 1, "REWIND_STORAGE_KEY"},
		{"sqlite with a malformed key", []string{"REWIND_STORAGE_KEY=abc"}, []string{"--storage", "sqlite"}, 1, "malformed"},
		{"cursor from the file without the file's sqlite", []string{"REWIND_STORAGE=memory", key}, []string{"--config", cursor}, 1, "add --storage sqlite"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runEnv(t, dir, c.env, append([]string{"gateway", "--port", "0"}, c.args...)...)
			if r.code != c.code || !strings.Contains(r.stderr, c.want) || strings.Contains(r.stderr, "listening on") {
				t.Errorf("exit %d (want %d), stderr:\n%s\nwant %q", r.code, c.code, r.stderr, c.want)
			}
		})
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 3 { // cursor.json, null.json, unknown.json
		t.Errorf("a failed startup wrote in the workspace: %v", ents)
	}
}

func TestGatewayReplayAndSavingsAcrossRestart(t *testing.T) {
	mock := mockanthropic.New(mockanthropic.Options{})
	if err := mock.Start(); err != nil {
		t.Fatal(err)
	}
	defer mock.Close()
	dir := t.TempDir()

	r := runEnv(t, dir, nil, "--json", "savings")
	var empty map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &empty); err != nil || r.code != 0 || empty["replayed_calls"] != 0.0 || empty["note"] == "" {
		t.Fatalf("savings before any gateway: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if hasStore(t, dir) {
		t.Fatal("savings created a store")
	}

	for run := 1; run <= 2; run++ {
		g := startGatewayProc(t, dir, nil, "--upstream", mock.URL)
		for _, want := range []string{"(flag --upstream)", "CLEARED ON RESTART", "replay savings only"} {
			if !strings.Contains(g.stderr.String(), want) {
				t.Errorf("banner lacks %q:\n%s", want, g.stderr.String())
			}
		}
		_, h1, b1 := postMessages(t, g.url, e2eBody)
		_, h2, b2 := postMessages(t, g.url, e2eBody)
		if h1.Get("X-Rewind-Replay") != "miss" || h2.Get("X-Rewind-Replay") != "hit" || !bytes.Equal(b1, b2) || !bytes.HasSuffix(b2, []byte("message_stop\"}\n\n")) {
			t.Errorf("run %d: %s then %s", run, h1.Get("X-Rewind-Replay"), h2.Get("X-Rewind-Replay"))
		}
		if code := g.stop(t); code != 0 {
			t.Errorf("run %d: exit %d after SIGTERM:\n%s", run, code, g.stderr.String())
		}
	}
	if mock.Hits() != 2 {
		t.Errorf("upstream hits %d, want 2 (memory is cleared on restart)", mock.Hits())
	}
	r = runEnv(t, dir, nil, "--json", "savings")
	var s struct {
		ReplayedCalls  int64   `json:"replayed_calls"`
		AvoidedCostUSD float64 `json:"avoided_cost_usd"`
		AvoidedTokens  struct {
			Input, Output int64
		} `json:"avoided_tokens"`
		Note string `json:"note"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil || s.ReplayedCalls != 2 || s.AvoidedTokens.Input == 0 || s.AvoidedCostUSD <= 0 || !strings.HasPrefix(s.Note, "replay savings only") {
		t.Errorf("savings after two runs: %s (%v)", r.stdout, err)
	}
	r = runEnv(t, dir, nil, "savings")
	if r.code != 0 || !strings.Contains(r.stdout, "Replay savings only") || !strings.Contains(r.stdout, "replayed calls     2") {
		t.Errorf("savings text:\n%s", r.stdout)
	}
}

func TestGatewayTapeRecordRestartReplay(t *testing.T) {
	mock := mockanthropic.New(mockanthropic.Options{})
	if err := mock.Start(); err != nil {
		t.Fatal(err)
	}
	defer mock.Close()
	dir := t.TempDir()
	key := "REWIND_STORAGE_KEY=" + strings.Repeat("5a", 32)

	// Record; a cursor inherited from the environment is cleared by --record-only.
	g := startGatewayProc(t, dir, []string{key, "REWIND_REPLAY_CURSOR=inherited"}, "--upstream", mock.URL, "--storage", "sqlite", "--epoch", "trial-1", "--record-only")
	var recorded [][]byte
	for i := range 2 {
		status, h, b := postMessages(t, g.url, e2eBody)
		if status != 200 || h.Get("X-Rewind-Replay") != "recorded" || h.Get("X-Rewind-Tape-Position") != string(rune('0'+i)) {
			t.Fatalf("record %d: %d %v", i, status, h)
		}
		recorded = append(recorded, b)
	}
	if code := g.stop(t); code != 0 {
		t.Fatalf("exit %d:\n%s", code, g.stderr.String())
	}
	if _, err := os.Stat(filepath.Join(stateDir(t, dir), "storage", "default", "tape.db")); err != nil {
		t.Fatalf("no tape under the store's storage/: %v", err)
	}

	// Replay after the restart: same bytes, no upstream call; past the end 409.
	g = startGatewayProc(t, dir, []string{key}, "--upstream", mock.URL, "--storage", "sqlite", "--epoch", "trial-1", "--replay-cursor", "review-1")
	for i := range 2 {
		status, h, b := postMessages(t, g.url, e2eBody, "x-rewind-request-id", "call-"+string(rune('0'+i)))
		if status != 200 || h.Get("X-Rewind-Replay") != "tape" || !bytes.Equal(b, recorded[i]) {
			t.Fatalf("replay %d: %d %s", i, status, b)
		}
	}
	if status, _, b := postMessages(t, g.url, e2eBody); status != 409 || !bytes.Contains(b, []byte("tape_end")) {
		t.Errorf("past the end: %d %s", status, b)
	}
	if code := g.stop(t); code != 0 {
		t.Errorf("exit %d", code)
	}
	if mock.Hits() != 2 {
		t.Errorf("upstream hits %d, want 2", mock.Hits())
	}
}
