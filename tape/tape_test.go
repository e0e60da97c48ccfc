package tape

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestRecordStoresWhatMatters(t *testing.T) {
	tp := openTest(t, t.TempDir())
	r, err := tp.Recorder("e1")
	if err != nil {
		t.Fatal(err)
	}
	c := call(7)
	c.Response.Header.Set("Content-Length", "123")
	c.Response.Header.Set("Connection", "keep-alive")
	c.Response.Header.Set("Set-Cookie", "session=secret")
	c.Response.Header.Add("Anthropic-Ratelimit-Requests-Remaining", "99")
	pos, err := r.Record(context.Background(), c)
	if err != nil || pos != 0 {
		t.Fatalf("Record = %d, %v", pos, err)
	}
	e, err := tp.Entry(context.Background(), "e1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if e.Hash != RequestHash(c.Request, DefaultAnswerHeaders) {
		t.Errorf("stored hash %s, want %s", e.Hash, RequestHash(c.Request, DefaultAnswerHeaders))
	}
	got := e.Call.Request
	if got.Method != "POST" || got.Path != "/v1/messages" || !bytes.Equal(got.Body, c.Request.Body) {
		t.Errorf("stored request %s %s %q", got.Method, got.Path, got.Body)
	}
	if len(got.Header) != 1 || got.Header.Get("Anthropic-Version") != "2023-06-01" {
		t.Errorf("stored request headers %v, want only Anthropic-Version", got.Header)
	}
	rh := e.Call.Response.Header
	for _, h := range []string{"Content-Length", "Connection", "Set-Cookie"} {
		if rh.Get(h) != "" {
			t.Errorf("response header %s was stored", h)
		}
	}
	if rh.Get("Request-Id") != "req_7" || rh.Get("Anthropic-Ratelimit-Requests-Remaining") != "99" || rh.Get("Content-Type") != "application/json" {
		t.Errorf("stored response headers %v", rh)
	}
	if _, err := tp.Entry(context.Background(), "e1", 1); !errors.Is(err, ErrEndOfTape) {
		t.Errorf("Entry past the end: %v", err)
	}
}

func TestIdenticalCallsAreDistinctOccurrences(t *testing.T) {
	tp := openTest(t, t.TempDir())
	r, _ := tp.Recorder("e1")
	for i := range 3 {
		c := call(1)
		c.Response.Body = []byte{byte('a' + i)}
		if pos, err := r.Record(context.Background(), c); err != nil || pos != int64(i) {
			t.Fatalf("Record = %d, %v", pos, err)
		}
	}
	cur, _ := tp.Cursor("e1", "c")
	for i := range 3 {
		got, err := cur.Next(context.Background(), "", req(1))
		if err != nil || got.Position != int64(i) || string(got.Response.Body) != string(rune('a'+i)) {
			t.Fatalf("Next %d = %+v, %v", i, got, err)
		}
	}
}

func TestSSEStreamIsByteExact(t *testing.T) {
	tp := openTest(t, t.TempDir())
	r, _ := tp.Recorder("e1")
	stream := []byte("event: message_start\r\ndata: {\"type\":\"message_start\"}\r\n\r\n" +
		": comment\n\nevent: content_block_delta\ndata: {\"delta\":{\"text\":\"h\\u00e9\"}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n\x00\xff")
	c := Call{Request: req(1), Response: Response{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream; charset=utf-8"}}, Body: stream}}
	if _, err := r.Record(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	cur, _ := tp.Cursor("e1", "c")
	got, err := cur.Next(context.Background(), "id-1", req(1))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Response.Body, stream) || !got.Response.EventStream() {
		t.Fatalf("replayed stream differs: %q (event stream %v)", got.Response.Body, got.Response.EventStream())
	}
}

func TestRestartInTheMiddleOfACursor(t *testing.T) {
	dir := t.TempDir()
	tp := openTest(t, dir)
	recordN(t, tp, "e1", 5)
	cur, _ := tp.Cursor("e1", "review-1")
	for i := range 2 {
		got, err := cur.Next(context.Background(), "", req(i))
		wantServed(t, got, err, i)
	}
	tp.Close()

	tp = openTest(t, dir)
	cur, err := tp.Cursor("e1", "review-1")
	if err != nil {
		t.Fatal(err)
	}
	if pos, err := cur.Position(context.Background()); err != nil || pos != 2 {
		t.Fatalf("Position after restart = %d, %v; want 2", pos, err)
	}
	for i := 2; i < 5; i++ {
		got, err := cur.Next(context.Background(), "", req(i))
		wantServed(t, got, err, i)
	}
	// Another cursor over the same epoch starts at 0, independently.
	other, _ := tp.Cursor("e1", "review-2")
	got, err := other.Next(context.Background(), "", req(0))
	wantServed(t, got, err, 0)
}

func TestRequestIDRetry(t *testing.T) {
	dir := t.TempDir()
	tp := openTest(t, dir)
	recordN(t, tp, "e1", 3)
	cur, _ := tp.Cursor("e1", "c")
	ctx := context.Background()

	got, err := cur.Next(ctx, "call-a", req(0))
	wantServed(t, got, err, 0)
	for range 3 {
		got, err = cur.Next(ctx, "call-a", req(0))
		wantServed(t, got, err, 0)
		if !got.Retried {
			t.Fatal("a retry was not marked Retried")
		}
	}
	if pos, _ := cur.Position(ctx); pos != 1 {
		t.Fatalf("retries consumed positions: cursor at %d", pos)
	}
	// The id is remembered across a restart.
	tp.Close()
	tp = openTest(t, dir)
	cur, _ = tp.Cursor("e1", "c")
	got, err = cur.Next(ctx, "call-a", req(0))
	wantServed(t, got, err, 0)
	got, err = cur.Next(ctx, "call-b", req(1))
	wantServed(t, got, err, 1)
	if got.Retried {
		t.Fatal("a new id was marked Retried")
	}

	// Reusing an id for a different request is a strict miss that names the id.
	_, err = cur.Next(ctx, "call-a", req(2))
	var miss *MissError
	if !errors.As(err, &miss) || miss.RequestID != "call-a" || miss.Position != 0 {
		t.Fatalf("reused id: got %v", err)
	}
	if pos, _ := cur.Position(ctx); pos != 2 {
		t.Fatalf("a reused id moved the cursor to %d", pos)
	}
	// Ids are per cursor: another cursor's call-a is a new call.
	other, _ := tp.Cursor("e1", "c2")
	got, err = other.Next(ctx, "call-a", req(0))
	wantServed(t, got, err, 0)
	if got.Retried {
		t.Fatal("an id of another cursor was marked Retried")
	}
}

func TestStrictMiss(t *testing.T) {
	tp := openTest(t, t.TempDir())
	recordN(t, tp, "e1", 2)
	cur, _ := tp.Cursor("e1", "review-1")
	ctx := context.Background()

	wrong := req(1) // the recorded request at position 0 is req(0)
	_, err := cur.Next(ctx, "x-1", wrong)
	var miss *MissError
	if !errors.Is(err, ErrStrictMiss) || !errors.As(err, &miss) {
		t.Fatalf("got %v, want a strict miss", err)
	}
	if miss.Cursor != "review-1" || miss.Position != 0 || miss.Epoch != "e1" || miss.Tenant != "acme" ||
		miss.Recorded != RequestHash(req(0), DefaultAnswerHeaders) || miss.Got != RequestHash(wrong, DefaultAnswerHeaders) {
		t.Fatalf("miss = %+v", miss)
	}
	msg := err.Error()
	for _, want := range []string{"review-1", "position 0", miss.Recorded.String(), miss.Got.String()} {
		if !strings.Contains(msg, want) {
			t.Errorf("miss message lacks %q: %s", want, msg)
		}
	}
	if strings.Contains(msg, "plaintext-prompt") {
		t.Errorf("miss message contains a body: %s", msg)
	}
	if pos, _ := cur.Position(ctx); pos != 0 {
		t.Fatalf("a miss moved the cursor to %d", pos)
	}
	// The missed id was not remembered: using it for the right request serves position 0.
	got, err := cur.Next(ctx, "x-1", req(0))
	wantServed(t, got, err, 0)

	// What changes the hash: an answer header, the path, the method, the body; what does not:
	// other headers, JSON property order and whitespace.
	same := req(1)
	same.Header = http.Header{"anthropic-version": {" 2023-06-01 "}, "Authorization": {"Bearer other"}}
	same.Body = []byte(` { "messages" : [ { "content" : "plaintext-prompt-1", "role" : "user" } ], "max_tokens" : 64, "model" : "claude-test" } `)
	if RequestHash(same, DefaultAnswerHeaders) != RequestHash(req(1), DefaultAnswerHeaders) {
		t.Fatal("an equivalent request hashes differently")
	}
	for name, change := range map[string]func(*Request){
		"version": func(r *Request) { r.Header.Set("Anthropic-Version", "2024-01-01") },
		"beta":    func(r *Request) { r.Header.Set("Anthropic-Beta", "x") },
		"path":    func(r *Request) { r.Path = "/v1/messages?beta=true" },
		"method":  func(r *Request) { r.Method = "PUT" },
		"body":    func(r *Request) { r.Body = bytes.Replace(r.Body, []byte("64"), []byte("65"), 1) },
	} {
		r := req(1)
		change(&r)
		if _, err := cur.Next(ctx, "", r); !errors.Is(err, ErrStrictMiss) {
			t.Errorf("changed %s: got %v, want a strict miss", name, err)
		}
	}
	got, err = cur.Next(ctx, "", same)
	wantServed(t, got, err, 1)
}

func TestEndOfTape(t *testing.T) {
	dir := t.TempDir()
	tp := openTest(t, dir)
	recordN(t, tp, "e1", 1)
	cur, _ := tp.Cursor("e1", "c")
	ctx := context.Background()
	got, err := cur.Next(ctx, "", req(0))
	wantServed(t, got, err, 0)
	_, err = cur.Next(ctx, "", req(1))
	var end *EndError
	if !errors.As(err, &end) || !errors.Is(err, ErrEndOfTape) || end.Position != 1 || end.Cursor != "c" {
		t.Fatalf("got %v, want end of tape at 1", err)
	}
	// An unknown epoch is an empty tape.
	empty, _ := tp.Cursor("never", "c")
	if _, err := empty.Next(ctx, "", req(0)); !errors.Is(err, ErrEndOfTape) {
		t.Fatalf("empty epoch: %v", err)
	}
	// Recording more continues the tape under the same cursor.
	r, _ := tp.Recorder("e1")
	if pos, err := r.Record(ctx, call(1)); err != nil || pos != 1 {
		t.Fatalf("Record = %d, %v", pos, err)
	}
	got, err = cur.Next(ctx, "", req(1))
	wantServed(t, got, err, 1)
}

func TestEligibility(t *testing.T) {
	tp, err := Open(context.Background(), Options{Dir: t.TempDir(), Tenant: "acme", Key: testKey, MaxBody: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer tp.Close()
	r, _ := tp.Recorder("e1")
	ctx := context.Background()
	c := call(0)
	c.Request.Body = bytes.Repeat([]byte("x"), 1000)
	c.Response.Body = bytes.Repeat([]byte("y"), 1000)
	if _, err := r.Record(ctx, c); err != nil {
		t.Fatalf("bodies of exactly MaxBody: %v", err)
	}
	c.Request.Body = append(c.Request.Body, 'x')
	if _, err := r.Record(ctx, c); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("request over MaxBody: %v", err)
	}
	c.Request.Body = c.Request.Body[:10]
	c.Response.Body = append(c.Response.Body, 'y')
	if _, err := r.Record(ctx, c); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("response over MaxBody: %v", err)
	}
	if n, _ := tp.Len(ctx, "e1"); n != 1 {
		t.Fatalf("refused calls were recorded: %d calls", n)
	}
	o := tp.Options()
	if o.MaxBody != 1000 || o.MaxQueue != DefaultMaxQueue || o.UpstreamTimeout != DefaultUpstreamTimeout || o.Key != nil {
		t.Fatalf("Options() = %+v", o)
	}
}

func TestDefaultsAndUpstreamContext(t *testing.T) {
	tp := openTest(t, t.TempDir())
	o := tp.Options()
	if o.MaxBody != 512<<10 || o.MaxQueue != 64 || o.UpstreamTimeout != 120*time.Second {
		t.Fatalf("defaults = %+v", o)
	}
	ctx, cancel := tp.UpstreamContext(context.Background())
	defer cancel()
	dl, ok := ctx.Deadline()
	if !ok || time.Until(dl) > 120*time.Second || time.Until(dl) < 60*time.Second {
		t.Fatalf("upstream deadline %v (set %v)", dl, ok)
	}
}

func TestInvalidArguments(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, o := range []Options{
		{Tenant: "acme", Key: testKey},
		{Dir: dir, Tenant: "", Key: testKey},
		{Dir: dir, Tenant: "../etc", Key: testKey},
		{Dir: dir, Tenant: "acme", Key: testKey, MaxBody: -1},
		{Dir: dir, Tenant: "acme", Key: testKey, MaxQueue: -1},
	} {
		if _, err := Open(ctx, o); !errors.Is(err, ErrInvalid) {
			t.Errorf("Open(%+v) = %v, want ErrInvalid", o, err)
		}
	}
	tp := openTest(t, dir)
	if _, err := tp.Recorder("a/b"); !errors.Is(err, ErrInvalid) {
		t.Errorf("Recorder(a/b): %v", err)
	}
	if _, err := tp.Cursor("e1", ".."); !errors.Is(err, ErrInvalid) {
		t.Errorf("Cursor(..): %v", err)
	}
	cur, _ := tp.Cursor("e1", "c")
	if _, err := cur.Next(ctx, "has space", req(0)); !errors.Is(err, ErrInvalid) {
		t.Errorf("request id with a space: %v", err)
	}
	r, _ := tp.Recorder("e1")
	for _, c := range []Call{
		{Request: Request{Method: "", Path: "/"}, Response: Response{Status: 200}},
		{Request: Request{Method: "POST", Path: "v1"}, Response: Response{Status: 200}},
		{Request: Request{Method: "POST", Path: "/"}, Response: Response{Status: 0}},
	} {
		if _, err := r.Record(ctx, c); !errors.Is(err, ErrInvalid) {
			t.Errorf("Record(%+v) = %v, want ErrInvalid", c, err)
		}
	}
}

func TestOneRecorderAndOneCursorHandle(t *testing.T) {
	dir := t.TempDir()
	tp := openTest(t, dir)
	r, err := tp.Recorder("e1")
	if err != nil {
		t.Fatal(err)
	}
	// A second recorder of the same epoch is refused, also through another Tape handle.
	if _, err := tp.Recorder("e1"); !errors.Is(err, ErrConflict) {
		t.Fatalf("second recorder: %v", err)
	}
	tp2 := openTest(t, dir)
	if _, err := tp2.Recorder("e1"); !errors.Is(err, ErrConflict) {
		t.Fatalf("second recorder through another handle: %v", err)
	}
	// Another epoch records alongside, through either handle.
	r2, err := tp2.Recorder("e2")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r2.Record(context.Background(), call(0)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Record(context.Background(), call(0)); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if _, err := r.Record(context.Background(), call(1)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Record after Close: %v", err)
	}
	if r3, err := tp2.Recorder("e1"); err != nil {
		t.Fatalf("recorder after the first closed: %v", err)
	} else {
		r3.Close()
	}

	c, err := tp.Cursor("e1", "c")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tp2.Cursor("e1", "c"); !errors.Is(err, ErrConflict) {
		t.Fatalf("second cursor handle: %v", err)
	}
	// Closing the Tape releases its handles' locks.
	tp.Close()
	if _, err := c.Next(context.Background(), "", req(0)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Next after the tape closed: %v", err)
	}
	if _, err := tp2.Cursor("e1", "c"); err != nil {
		t.Fatalf("cursor after the first tape closed: %v", err)
	}
}

func TestConcurrentUse(t *testing.T) {
	tp := openTest(t, t.TempDir())
	r, _ := tp.Recorder("e1")
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 40 {
		wg.Go(func() {
			_, err := r.Record(context.Background(), call(i))
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n, err := tp.Verify(context.Background(), "e1"); err != nil || n != 40 {
		t.Fatalf("Verify = %d, %v", n, err)
	}
	if eps, err := tp.Epochs(context.Background()); err != nil || len(eps) != 1 || eps[0] != "e1" {
		t.Fatalf("Epochs = %v, %v", eps, err)
	}
}
