package gateway

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agent-rewind/rewind/tools/mockanthropic"
)

// benchPost sends body to base and drains the response.
func benchPost(b *testing.B, c *http.Client, base string, body []byte) {
	req, _ := http.NewRequest("POST", base+"/v1/messages", bytes.NewReader(body))
	req.Header.Set("x-api-key", key1)
	req.Header.Set("anthropic-version", "2023-06-01")
	resp, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		b.Fatalf("status %d", resp.StatusCode)
	}
}

// BenchmarkPassThrough compares a distinct (never replayed) request sent to the mock
// upstream directly and through the gateway, as JSON and as an event stream: the difference
// per op is the added latency (of the whole exchange, in this one process).
func BenchmarkPassThrough(b *testing.B) {
	mock := mockanthropic.New(mockanthropic.Options{})
	if err := mock.Start(); err != nil {
		b.Fatal(err)
	}
	defer mock.Close()
	cfg := DefaultConfig(b.TempDir())
	cfg.Upstream.Value = mock.URL
	g, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	url, stop := serveB(b, g)
	defer stop()
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	var n atomic.Int64
	body := func(stream bool) []byte {
		return fmt.Appendf(nil, `{"model":"claude-sonnet-5-5","max_tokens":64,"stream":%v,"metadata":{"user_id":"b-%d"},"messages":[{"role":"user","content":"Reply with OK."}]}`, stream, n.Add(1))
	}
	for _, arm := range []struct {
		name, base string
		stream     bool
	}{{"direct", mock.URL, false}, {"gateway", url, false}, {"direct-sse", mock.URL, true}, {"gateway-sse", url, true}} {
		b.Run(arm.name, func(b *testing.B) {
			for b.Loop() {
				benchPost(b, c, arm.base, body(arm.stream))
			}
		})
	}
}

// BenchmarkReplayHit measures memory-replay hits from concurrent clients.
func BenchmarkReplayHit(b *testing.B) {
	mock := mockanthropic.New(mockanthropic.Options{})
	if err := mock.Start(); err != nil {
		b.Fatal(err)
	}
	defer mock.Close()
	cfg := DefaultConfig(b.TempDir())
	cfg.Upstream.Value = mock.URL
	g, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	url, stop := serveB(b, g)
	defer stop()
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	body := []byte(`{"model":"claude-sonnet-5-5","max_tokens":64,"messages":[{"role":"user","content":"Replay me."}]}`)
	benchPost(b, c, url, body)
	before := mock.Hits()
	b.SetParallelism(4)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			benchPost(b, c, url, body)
		}
	})
	if mock.Hits() != before {
		b.Fatalf("%d replays reached the upstream", mock.Hits()-before)
	}
}

// BenchmarkReplayKey is the CPU cost of the replay key of a 20 KB agent request.
func BenchmarkReplayKey(b *testing.B) {
	cfg := DefaultConfig(b.TempDir())
	g, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	body := []byte(`{"model":"claude-sonnet-5-5","max_tokens":1024,"messages":[{"role":"user","content":"` + strings.Repeat("some context, ", 1400) + `"}]}`)
	req, _ := http.NewRequest("POST", "http://x/v1/messages", nil)
	req.Header.Set("x-api-key", key1)
	req.Header.Set("anthropic-version", "2023-06-01")
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		g.replayKey(req, body, "")
	}
}

func serveB(b *testing.B, g *Gateway) (string, func()) { return serve(b, g) }

// BenchmarkMessageUsage compares reading a recorded response's usage by scanning (what the
// gateway does after every pass-through call) with json.Unmarshal of the whole body, for a
// short answer and one of 16 KB of text.
func BenchmarkMessageUsage(b *testing.B) {
	long := strings.Replace(recordedMessage, `"text":"`, `"text":"`+strings.Repeat("word ", 16<<10/5), 1)
	for _, c := range []struct{ name, body string }{{"short", recordedMessage}, {"16KB", long}} {
		body := []byte(c.body)
		if _, _, ok := MessageUsage(body); !ok {
			b.Fatalf("%s: not a message", c.name)
		}
		b.Run(c.name+"/scan", func(b *testing.B) {
			for b.Loop() {
				MessageUsage(body)
			}
		})
		b.Run(c.name+"/unmarshal", func(b *testing.B) {
			for b.Loop() {
				messageUsageReference(body)
			}
		})
	}
}
