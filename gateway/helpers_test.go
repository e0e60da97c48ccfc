package gateway

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/tools/mockanthropic"
)

// syncBuffer is a log destination safe for the gateway's writes and the test's reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// testConfig is the default configuration pointed at upstream, with a savings file and a log
// in a fresh workspace.
func testConfig(t *testing.T, upstream string) (*Config, *syncBuffer) {
	t.Helper()
	ws := t.TempDir()
	c := DefaultConfig(ws)
	c.Upstream.set(upstream, SourceFlag, "--upstream")
	c.SavingsFile = filepath.Join(ws, ".rewind", SavingsFileName)
	c.Prepare = func() error { return os.MkdirAll(filepath.Join(ws, ".rewind"), 0o700) }
	log := &syncBuffer{}
	c.Log = log
	return c, log
}

// startGateway serves a gateway built from cfg on a loopback port until the test ends.
func startGateway(t *testing.T, cfg *Config) (*Gateway, string) {
	t.Helper()
	g, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	url, stop := serve(t, g)
	t.Cleanup(func() {
		stop()
		if err := g.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return g, url
}

// serve serves g on a loopback port; stop ends the server (not the gateway).
func serve(t testing.TB, g *Gateway) (url string, stop func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Serve(ctx, ln) }()
	var once sync.Once
	return "http://" + ln.Addr().String(), func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("serve: %v", err)
			}
		})
	}
}

// startMock starts a mock Anthropic upstream until the test ends.
func startMock(t *testing.T, opts mockanthropic.Options) *mockanthropic.Server {
	t.Helper()
	m := mockanthropic.New(opts)
	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// call is one finished HTTP call.
type call struct {
	status int
	header http.Header
	body   []byte
}

var testClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}, Timeout: time.Minute}

// post sends body to base+path with the given headers (name, value pairs).
func post(t *testing.T, base, path, body string, headers ...string) call {
	t.Helper()
	return send(t, http.MethodPost, base, path, strings.NewReader(body),
		append([]string{"content-type", "application/json", "anthropic-version", "2023-06-01"}, headers...)...)
}

// get sends a GET to base+path with the given headers (name, value pairs).
func get(t *testing.T, base, path string, headers ...string) call {
	t.Helper()
	return send(t, http.MethodGet, base, path, nil, headers...)
}

// send makes one call and reads its whole response.
func send(t *testing.T, method, base, path string, body io.Reader, headers ...string) call {
	t.Helper()
	req, err := http.NewRequest(method, base+path, body)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	resp, err := testClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return call{resp.StatusCode, resp.Header, b}
}

const key1 = "sk-ant-test-one"

func messagesBody(text string, stream bool) string {
	s := `{"model":"claude-sonnet-5-5","max_tokens":64,"messages":[{"role":"user","content":"` + text + `"}]`
	if stream {
		s += `,"stream":true`
	}
	return s + "}"
}
