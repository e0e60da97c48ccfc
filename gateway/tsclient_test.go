package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/tools/mockanthropic"
)

// requireTool returns path, or skips the test with a clear message when the tool is missing,
// unless REWIND_CI=1, where a missing tool is a failure.
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

// TestTypeScriptSDK points the official Anthropic TypeScript SDK (testdata/tsclient, pinned
// by its package-lock.json) at the gateway: replay hit and miss, streaming through the SDK's
// own event parser, credential isolation, and a 403 on a bad scope. It needs node and
// `npm ci --prefix gateway/testdata/tsclient`.
func TestTypeScriptSDK(t *testing.T) {
	node, err := exec.LookPath("node")
	node = requireTool(t, "node", node, err)
	dir := filepath.Join("testdata", "tsclient")
	_, err = os.Stat(filepath.Join(dir, "node_modules", "@anthropic-ai", "sdk", "package.json"))
	requireTool(t, "the Anthropic TypeScript SDK (run: npm ci --prefix gateway/testdata/tsclient)", "", err)

	mock := startMock(t, mockanthropic.Options{})
	cfg, _ := testConfig(t, mock.URL)
	_, gw := startGateway(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a bound for a hung child
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "client.mjs"), gw)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("client.mjs: %v\n%s", err, stderr.String())
	}
	var r struct {
		First, Second, OtherCredential struct {
			Replay, Text string
			Usage        struct {
				InputTokens int `json:"input_tokens"`
			}
		}
		StreamFirst, StreamSecond struct {
			Replay, Text string
			Events       []string
		}
		BadScope struct {
			Status     int
			IsAPIError bool
			Type       string
			Message    string
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("report: %v\n%s", err, stdout.String())
	}
	if r.First.Replay != "miss" || r.Second.Replay != "hit" || r.First.Text != r.Second.Text || r.First.Usage.InputTokens == 0 {
		t.Errorf("non-streaming: %+v %+v", r.First, r.Second)
	}
	if r.StreamFirst.Replay != "miss" || r.StreamSecond.Replay != "hit" || r.StreamSecond.Text != r.StreamFirst.Text ||
		!slices.Equal(r.StreamFirst.Events, r.StreamSecond.Events) || r.StreamSecond.Events[len(r.StreamSecond.Events)-1] != "message_stop" {
		t.Errorf("streaming: %+v %+v", r.StreamFirst, r.StreamSecond)
	}
	if r.OtherCredential.Replay != "miss" {
		t.Errorf("another credential got %q", r.OtherCredential.Replay)
	}
	if r.BadScope.Status != 403 || !r.BadScope.IsAPIError || r.BadScope.Type != "permission_error" || r.BadScope.Message == "" {
		t.Errorf("bad scope: %+v", r.BadScope)
	}
	if mock.Hits() != 3 {
		t.Errorf("upstream hits %d, want 3 (two misses and another credential's call)", mock.Hits())
	}
}

// TestTypeScriptSDKTeam points the official TypeScript SDK at two replicas of a team gateway
// on one PostgreSQL: a call recorded through A is a replay through B, streaming included, and
// a call without the gateway key is the SDK's AuthenticationError.
func TestTypeScriptSDKTeam(t *testing.T) {
	node, err := exec.LookPath("node")
	node = requireTool(t, "node", node, err)
	dir := filepath.Join("testdata", "tsclient")
	_, err = os.Stat(filepath.Join(dir, "node_modules", "@anthropic-ai", "sdk", "package.json"))
	requireTool(t, "the Anthropic TypeScript SDK (run: npm ci --prefix gateway/testdata/tsclient)", "", err)

	url, s := teamDB(t)
	_, key := newKey(t, s, "acme")
	mock := startMock(t, mockanthropic.Options{})
	a, b := teamReplica(t, mock.URL, url, nil), teamReplica(t, mock.URL, url, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "team.mjs"), a, b, key)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("team.mjs: %v\n%s", err, stderr.String())
	}
	var r struct {
		First, Second             struct{ Replay, Text string }
		StreamFirst, StreamSecond struct {
			Replay, Text string
			Events       []string
		}
		NoKey struct {
			Status      int
			IsAuthError bool
			Type        string
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("report: %v\n%s", err, stdout.String())
	}
	if r.First.Replay != "miss" || r.Second.Replay != "hit" || r.First.Text != r.Second.Text {
		t.Errorf("non-streaming across replicas: %+v %+v", r.First, r.Second)
	}
	if r.StreamFirst.Replay != "miss" || r.StreamSecond.Replay != "hit" || r.StreamSecond.Text != r.StreamFirst.Text ||
		!slices.Equal(r.StreamFirst.Events, r.StreamSecond.Events) || len(r.StreamSecond.Events) == 0 || r.StreamSecond.Events[len(r.StreamSecond.Events)-1] != "message_stop" {
		t.Errorf("streaming across replicas: %+v %+v", r.StreamFirst, r.StreamSecond)
	}
	if r.NoKey.Status != 401 || !r.NoKey.IsAuthError || r.NoKey.Type != "authentication_error" {
		t.Errorf("without the gateway key: %+v", r.NoKey)
	}
	if mock.Hits() != 2 {
		t.Errorf("upstream hits %d, want 2 (one per recorded call)", mock.Hits())
	}
}

// sdkCall is what openai.mjs reports of one call.
type sdkCall struct {
	Replay, Position, Text string
	Events                 []string
	Usage                  json.RawMessage
}

// runOpenAISDK runs testdata/tsclient/openai.mjs against base in mode and decodes its report.
func runOpenAISDK(t *testing.T, base, mode string, report any) {
	t.Helper()
	node, err := exec.LookPath("node")
	node = requireTool(t, "node", node, err)
	dir := filepath.Join("testdata", "tsclient")
	_, err = os.Stat(filepath.Join(dir, "node_modules", "openai", "package.json"))
	requireTool(t, "the OpenAI TypeScript SDK (run: npm ci --prefix gateway/testdata/tsclient)", "", err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a bound for a hung child
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "openai.mjs"), base, mode)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("openai.mjs %s: %v\n%s", mode, err, stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), report); err != nil {
		t.Fatalf("report: %v\n%s", err, stdout.String())
	}
}

var sdkCalls = []string{"responses", "responsesStream", "chat", "chatStream"}

// TestOpenAISDK points the official OpenAI TypeScript SDK (testdata/tsclient, pinned by its
// package-lock.json) at the gateway: Responses and Chat Completions, created and streamed
// through the SDK's own parsers, each a miss then a replay with the same text, usage and
// events; another key misses; a response the API would store is never replayed.
func TestOpenAISDK(t *testing.T) {
	mock := startMock(t, mockanthropic.Options{})
	cfg, _ := testConfig(t, mock.URL)
	_, gw := startGateway(t, cfg)
	var r map[string]json.RawMessage
	runOpenAISDK(t, gw, "replay", &r)
	for _, name := range sdkCalls {
		var c struct{ First, Second, OtherKey sdkCall }
		if err := json.Unmarshal(r[name], &c); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if c.First.Replay != "miss" || c.Second.Replay != "hit" || c.OtherKey.Replay != "miss" {
			t.Errorf("%s: %s, %s, another key %s; want miss, hit, miss", name, c.First.Replay, c.Second.Replay, c.OtherKey.Replay)
		}
		if c.First.Text != "OK." || c.Second.Text != c.First.Text || !bytes.Equal(c.Second.Usage, c.First.Usage) || len(c.First.Usage) < 10 ||
			!slices.Equal(c.Second.Events, c.First.Events) {
			t.Errorf("%s: the replay differs: %+v vs %+v", name, c.Second, c.First)
		}
	}
	var stored []struct{ Replay, Bypass string }
	json.Unmarshal(r["stored"], &stored)
	if len(stored) != 2 || stored[1].Replay != "bypass" || stored[1].Bypass != "store" {
		t.Errorf("a stored response: %+v, want bypass (store) each time", stored)
	}
	var bad struct {
		Status        int
		IsAPIError    bool
		Code, Message string
	}
	json.Unmarshal(r["badScope"], &bad)
	if bad.Status != 403 || !bad.IsAPIError || bad.Code != "scope_invalid" || !strings.Contains(bad.Message, "x-rewind-scope") {
		t.Errorf("a bad scope through the OpenAI SDK: %+v, want its APIError 403 scope_invalid with the gateway's message", bad)
	}
	if got, want := mock.PathHits("/v1/responses"), int64(2*2+2); got != want {
		t.Errorf("Responses upstream calls %d, want %d", got, want)
	}
	if got, want := mock.PathHits("/v1/chat/completions"), int64(2*2); got != want {
		t.Errorf("Chat upstream calls %d, want %d", got, want)
	}
}

// TestOpenAISDKTape records the SDK's calls on the tape and replays them in order after a
// restart with the upstream gone; a retry with the same request id gets the same response.
func TestOpenAISDKTape(t *testing.T) {
	mock := startMock(t, mockanthropic.Options{})
	cfg, _ := testConfig(t, mock.URL)
	tapeMode(t, cfg, "")
	g, gw, stop := startStoppable(t, cfg)
	var rec map[string]sdkCall
	runOpenAISDK(t, gw, "tape", &rec)
	stop()
	g.Close()
	mock.Close()
	replayCfg, _ := testConfig(t, mock.URL)
	replayCfg.StorageDirectory = cfg.StorageDirectory
	tapeMode(t, replayCfg, "sdk")
	_, gw2, _ := startStoppable(t, replayCfg)
	var rep map[string]sdkCall
	runOpenAISDK(t, gw2, "tape", &rep)
	for i, name := range sdkCalls {
		a, b := rec[name], rep[name]
		if a.Replay != "recorded" || b.Replay != "tape" || a.Position != strconv.Itoa(i) || b.Position != a.Position ||
			a.Text != "OK." || b.Text != a.Text || !bytes.Equal(a.Usage, b.Usage) || !slices.Equal(a.Events, b.Events) {
			t.Errorf("%s: recorded %+v, replayed %+v", name, a, b)
		}
	}
	if r := rep["retry"]; r.Replay != "tape-retry" || r.Position != "0" || r.Text != "OK." {
		t.Errorf("retry: %+v", r)
	}
}
