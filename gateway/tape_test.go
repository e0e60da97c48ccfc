package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/tape"
	"github.com/agent-rewind/rewind/tools/mockanthropic"
)

// testKey is a fixed tape key (tests only).
var testKey = bytes.Repeat([]byte{0x42}, 32)

// tapeMode switches cfg to the durable tape in a fresh directory: recording when cursor is
// empty, else replaying with that cursor.
func tapeMode(t *testing.T, cfg *Config, cursor string) {
	t.Helper()
	cfg.Storage.set(StorageSQLite, SourceFlag, "--storage")
	if cfg.StorageDirectory.Source == SourceDefault {
		cfg.StorageDirectory.set(filepath.Join(t.TempDir(), "storage"), SourceFlag, "--storage-directory")
	}
	cfg.Epoch.set("trial-1", SourceFlag, "--epoch")
	cfg.ReplayCursor.set(cursor, SourceFlag, "--replay-cursor")
	cfg.StorageKey = testKey
}

func TestTapeRecordRestartReplay(t *testing.T) {
	mock := startMock(t, mockanthropic.Options{})
	if err := mock.Add([]byte(messagesBody("one", false)), []byte(recordedMessage)); err != nil {
		t.Fatal(err)
	}
	cfg, _ := testConfig(t, mock.URL)
	tapeMode(t, cfg, "")
	calls := []string{messagesBody("one", true), messagesBody("two", false), messagesBody("one", true)}

	// Record: every call goes upstream, identical ones included, each a position.
	g, url, stop := startStoppable(t, cfg)
	var recorded []call
	for i, body := range calls {
		r := post(t, url, "/v1/messages", body, "x-api-key", key1)
		if r.status != 200 || r.header.Get(HeaderReplay) != "recorded" || r.header.Get(HeaderTapePosition) != strconv.Itoa(i) {
			t.Fatalf("record %d: %d %s pos %s: %s", i, r.status, r.header.Get(HeaderReplay), r.header.Get(HeaderTapePosition), r.body)
		}
		recorded = append(recorded, r)
	}
	if mock.Hits() != 3 {
		t.Fatalf("upstream hits %d while recording, want 3", mock.Hits())
	}
	stop()
	g.Close()

	// Restart in replay mode: the same requests, in order, are answered from the tape.
	replayCfg, _ := testConfig(t, mock.URL)
	replayCfg.StorageDirectory = cfg.StorageDirectory
	tapeMode(t, replayCfg, "review-1")
	g2, url2, stop2 := startStoppable(t, replayCfg)
	r0 := post(t, url2, "/v1/messages", calls[0], "x-api-key", key1, "x-rewind-request-id", "call-0")
	if r0.status != 200 || !bytes.Equal(r0.body, recorded[0].body) || r0.header.Get(HeaderReplay) != "tape" {
		t.Fatalf("replay 0: %d %s %q", r0.status, r0.header.Get(HeaderReplay), r0.body)
	}
	// A retry with the same request id gets the same response and consumes no position.
	retry := post(t, url2, "/v1/messages", calls[0], "x-api-key", key1, "x-rewind-request-id", "call-0")
	if retry.status != 200 || !bytes.Equal(retry.body, recorded[0].body) || retry.header.Get(HeaderReplay) != "tape-retry" || retry.header.Get(HeaderTapePosition) != "0" {
		t.Fatalf("retry: %d %s pos %s", retry.status, retry.header.Get(HeaderReplay), retry.header.Get(HeaderTapePosition))
	}
	// Out of order: a strict miss, 409, and the cursor does not move.
	miss := post(t, url2, "/v1/messages", calls[0], "x-api-key", key1)
	if miss.status != 409 || !bytes.Contains(miss.body, []byte("tape_strict_miss")) {
		t.Fatalf("out of order: %d %s", miss.status, miss.body)
	}
	stop2()
	g2.Close()

	// The cursor resumes across a restart.
	g3, url3, stop3 := startStoppable(t, replayCfg)
	defer func() { stop3(); g3.Close() }()
	for i := 1; i < 3; i++ {
		r := post(t, url3, "/v1/messages", calls[i], "x-api-key", key1)
		if r.status != 200 || !bytes.Equal(r.body, recorded[i].body) || r.header.Get(HeaderTapePosition) != strconv.Itoa(i) {
			t.Fatalf("replay %d: %d %s", i, r.status, r.body)
		}
	}
	end := post(t, url3, "/v1/messages", calls[0], "x-api-key", key1)
	if end.status != 409 || !bytes.Contains(end.body, []byte("tape_end")) {
		t.Errorf("past the end: %d %s", end.status, end.body)
	}
	if mock.Hits() != 3 {
		t.Errorf("replay reached the upstream: %d hits", mock.Hits())
	}
	// Unsupported mutations are refused; metadata reads pass through (the mock answers 404).
	if r := post(t, url3, "/v1/messages/batches", "{}", "x-api-key", key1); r.status != 405 || !bytes.Contains(r.body, []byte("replay_refused")) {
		t.Errorf("a mutation while replaying: %d %s", r.status, r.body)
	}
	req, _ := http.NewRequest("GET", url3+"/v1/models", nil)
	resp, err := testClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("GET while replaying: %d (want the upstream's 404)", resp.StatusCode)
	}
}

func startStoppable(t *testing.T, cfg *Config) (*Gateway, string, func()) {
	t.Helper()
	g, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	url, stop := serve(t, g)
	return g, url, stop
}

func TestTapeStartupFailures(t *testing.T) {
	mock := startMock(t, mockanthropic.Options{})
	cfg, _ := testConfig(t, mock.URL)
	tapeMode(t, cfg, "")
	g, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	// A second recorder of the same epoch: refused at startup.
	if _, err := New(cfg); !errors.Is(err, tape.ErrConflict) {
		t.Errorf("second recorder: %v", err)
	}
	// A wrong key.
	other, _ := testConfig(t, mock.URL)
	other.StorageDirectory = cfg.StorageDirectory
	tapeMode(t, other, "c1")
	other.StorageKey = bytes.Repeat([]byte{7}, 32)
	if _, err := New(other); !errors.Is(err, tape.ErrWrongKey) {
		t.Errorf("wrong key: %v", err)
	}
	// No key at all (REWIND_STORAGE_KEY unset): never a memory fallback.
	t.Setenv(tape.KeyEnv, "")
	other.StorageKey = nil
	if _, err := New(other); !errors.Is(err, tape.ErrKeyMissing) {
		t.Errorf("missing key: %v", err)
	}
}

// TestTapeQueueFull: with one exchange in progress and 64 waiting, the next gets 503 with
// Retry-After, and never reaches the upstream.
func TestTapeQueueFull(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	entered := make(chan struct{}, 100)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // a server notices a client leaving only once the body is read
		entered <- struct{}{}
		<-release
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(recordedMessage))
	}))
	defer up.Close()
	defer once.Do(func() { close(release) })
	cfg, _ := testConfig(t, up.URL)
	tapeMode(t, cfg, "")
	g, gw := startGateway(t, cfg)

	var wg sync.WaitGroup
	defer wg.Wait()
	results := make(chan int, 80)
	send := func() {
		wg.Go(func() { results <- post(t, gw, "/v1/messages", messagesBody("q", false), "x-api-key", key1).status })
	}
	send()
	<-entered // the first exchange holds the queue
	for range tape.DefaultMaxQueue {
		send()
	}
	deadline := time.Now().Add(time.Minute) // a bound for a hang, not a timing assertion
	for g.queue.Waiting() < tape.DefaultMaxQueue {
		if time.Now().After(deadline) {
			t.Fatalf("only %d requests are waiting", g.queue.Waiting())
		}
		time.Sleep(5 * time.Millisecond)
	}
	r := post(t, gw, "/v1/messages", messagesBody("q", false), "x-api-key", key1)
	if r.status != 503 || r.header.Get("Retry-After") == "" || !bytes.Contains(r.body, []byte("tape_queue_full")) {
		t.Errorf("over the queue limit: %d Retry-After %q %s", r.status, r.header.Get("Retry-After"), r.body)
	}
	once.Do(func() { close(release) })
	wg.Wait()
	close(results)
	n := 0
	for s := range results {
		if s != 200 {
			t.Errorf("a queued exchange got %d", s)
		}
		n++
	}
	if n != tape.DefaultMaxQueue+1 {
		t.Errorf("%d exchanges finished", n)
	}
}

// TestTapeStorageFailure: a tape that cannot serve answers 503, never the upstream.
func TestTapeStorageFailure(t *testing.T) {
	mock := startMock(t, mockanthropic.Options{})
	cfg, _ := testConfig(t, mock.URL)
	tapeMode(t, cfg, "c1")
	g, gw := startGateway(t, cfg)
	g.tape.Close() // the store goes away under the running gateway
	r := post(t, gw, "/v1/messages", messagesBody("x", false), "x-api-key", key1)
	if r.status != 503 || !bytes.Contains(r.body, []byte(`"type":"error"`)) || mock.Hits() != 0 {
		t.Errorf("%d %s, upstream hits %d", r.status, r.body, mock.Hits())
	}
	for _, c := range []struct {
		err    error
		status int
		retry  bool
	}{
		{&tape.MissError{}, 409, false}, {&tape.EndError{}, 409, false}, {tape.ErrConflict, 503, true},
		{tape.ErrStorage, 503, true}, {tape.ErrQueueFull, 503, true}, {tape.ErrTampered, 503, false},
		{tape.ErrCorrupt, 503, false}, {tape.ErrInvalid, 400, false},
	} {
		w := httptest.NewRecorder()
		tapeError(w, fmt.Errorf("wrapped: %w", c.err))
		if w.Code != c.status || (w.Header().Get("Retry-After") != "") != c.retry {
			t.Errorf("%v: %d Retry-After %q", c.err, w.Code, w.Header().Get("Retry-After"))
		}
	}
}

// TestTapeOversized: a request body over 512 KiB passes through unrecorded; a response that
// crosses 512 KiB mid-stream is delivered whole, unrecorded; both say so in the log.
func TestTapeOversized(t *testing.T) {
	big := strings.Repeat("x", 600<<10)
	var mu sync.Mutex
	hits := 0
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // a server notices a client leaving only once the body is read
		mu.Lock()
		hits++
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < 700; i++ { // 700 events of ~1 KiB
			fmt.Fprintf(w, "event: content_block_delta\ndata: {\"i\":%d,\"t\":\"%s\"}\n\n", i, strings.Repeat("y", 1000))
			if i%100 == 0 {
				w.(http.Flusher).Flush()
			}
		}
		w.Write([]byte("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"))
	}))
	defer up.Close()
	cfg, log := testConfig(t, up.URL)
	tapeMode(t, cfg, "")
	_, gw := startGateway(t, cfg)

	r := post(t, gw, "/v1/messages", messagesBody(big, true), "x-api-key", key1)
	if r.status != 200 || r.header.Get(HeaderReplay) != "unrecorded" || !strings.Contains(log.String(), "request body is") {
		t.Errorf("oversized request: %d %s; log %q", r.status, r.header.Get(HeaderReplay), log.String())
	}
	r = post(t, gw, "/v1/messages", messagesBody("small", true), "x-api-key", key1)
	if r.status != 200 || !bytes.HasSuffix(r.body, []byte("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")) || len(r.body) < 700_000 {
		t.Errorf("oversized response: %d, %d bytes", r.status, len(r.body))
	}
	if !strings.Contains(log.String(), "crossed the 524288-byte eligibility limit mid-stream") {
		t.Errorf("no skip line for the oversized response: %q", log.String())
	}
	// Nothing was recorded: a cursor over the epoch is at its end.
	tp, err := tape.Open(context.Background(), tape.Options{Dir: cfg.StorageDirectory.Value, Tenant: cfg.Tenant.Value, Key: testKey})
	if err == nil {
		c, err := tp.Cursor("trial-1", "check")
		if err == nil {
			_, err = c.Next(context.Background(), "", tape.Request{Method: "POST", Path: "/v1/messages", Body: []byte(messagesBody("small", true))})
			if !errors.Is(err, tape.ErrEndOfTape) {
				t.Errorf("an oversized call was recorded: %v", err)
			}
		}
		tp.Close()
	}
}

// TestTapeUpstreamDeadline: a stalled upstream is released by the absolute deadline, and
// nothing is recorded.
func TestTapeUpstreamDeadline(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // a server notices a client leaving only once the body is read
		<-r.Context().Done()
	}))
	defer up.Close()
	cfg, _ := testConfig(t, up.URL)
	tapeMode(t, cfg, "")
	cfg.UpstreamTimeout = 200 * time.Millisecond
	_, gw := startGateway(t, cfg)
	r := post(t, gw, "/v1/messages", messagesBody("stall", false), "x-api-key", key1)
	if r.status != 504 || r.header.Get(HeaderTapePosition) != "" {
		t.Errorf("stalled upstream: %d %s", r.status, r.body)
	}
}

func TestInStateDir(t *testing.T) {
	savings := filepath.Join("/ws", ".rewind", SavingsFileName)
	for dir, want := range map[string]bool{
		"/ws/.rewind/storage": true, "/ws/.rewind": true, "/ws/tapes": false, "/ws/.rewinder": false, "/elsewhere": false,
	} {
		if got := inStateDir(dir, savings); got != want {
			t.Errorf("inStateDir(%q) = %v", dir, got)
		}
	}
	if inStateDir("/ws/.rewind/storage", "") {
		t.Error("without a savings file nothing is the state directory")
	}
}
