package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agent-rewind/rewind/tape"
)

// openTape opens the tenant's tape and its recorder (no cursor) or cursor.
func (g *Gateway) openTape() error {
	cfg := g.cfg
	key := cfg.StorageKey
	if key == nil {
		// Read the key before anything is created: a missing or malformed key must fail
		// the start without leaving a state directory behind.
		k, err := tape.KeyFromEnv()
		if err != nil {
			return err
		}
		key = k
	}
	if cfg.Prepare != nil && (cfg.StorageDirectory.Source == SourceDefault || inStateDir(cfg.StorageDirectory.Value, cfg.SavingsFile)) {
		if err := cfg.Prepare(); err != nil {
			return fmt.Errorf("prepare the state directory for the tape: %w", err)
		}
	}
	t, err := tape.Open(context.Background(), tape.Options{
		Dir: cfg.StorageDirectory.Value, Tenant: cfg.Tenant.Value, Key: key,
		UpstreamTimeout: g.upstreamTimeout, AnswerHeaders: AnswerHeaders,
	})
	if err != nil {
		return fmt.Errorf("open the tape of tenant %q in %s: %w", cfg.Tenant.Value, cfg.StorageDirectory.Value, err)
	}
	if cfg.ReplayCursor.Value != "" {
		g.cursor, err = t.Cursor(cfg.Epoch.Value, cfg.ReplayCursor.Value)
	} else {
		g.recorder, err = t.Recorder(cfg.Epoch.Value)
	}
	if err != nil {
		t.Close()
		return fmt.Errorf("open the tape of tenant %q: %w", cfg.Tenant.Value, err)
	}
	g.tape = t
	g.queue = tape.NewQueue(tape.DefaultMaxQueue)
	g.maxTapeBody = t.Options().MaxBody
	return nil
}

// tapeRecorder and tapeCursor are what the gateway needs of a tape, in SQLite or PostgreSQL.
type tapeRecorder interface {
	Record(ctx context.Context, call tape.Call) (int64, error)
}

type tapeCursor interface {
	Next(ctx context.Context, requestID string, req tape.Request) (tape.Replayed, error)
}

// serveTeamTape records or replays the caller's tenant's tape in PostgreSQL: no queue across
// exchanges (the database orders positions across every replica).
func (g *Gateway) serveTeamTape(w http.ResponseWriter, r *http.Request, api API, body []byte, id identity) {
	tp, err := g.team.tape(r.Context(), id.tenant)
	if err != nil {
		g.countStoreError(err)
		g.logf("database: open the tape of tenant %q: %v", id.tenant, err)
		tapeError(w, err)
		return
	}
	if name := g.cfg.ReplayCursor.Value; name != "" {
		cur, err := tp.Cursor(g.cfg.Epoch.Value, name)
		if err != nil {
			tapeError(w, err)
			return
		}
		g.replayTape(w, r, api, body, id, cur)
		return
	}
	rec, err := tp.Recorder(g.cfg.Epoch.Value)
	if err != nil {
		tapeError(w, err)
		return
	}
	g.recordTape(w, r, api, body, rec)
}

// countStoreError counts a failure of the store itself (not a miss, an end or a bad request).
func (g *Gateway) countStoreError(err error) {
	for _, e := range []error{tape.ErrStrictMiss, tape.ErrEndOfTape, tape.ErrInvalid, tape.ErrTooLarge, tape.ErrQueueFull} {
		if errors.Is(err, e) {
			return
		}
	}
	g.metrics.dbErrors.Add(1)
}

// tapeError answers a tape failure: 409 when the tape has no answer for the request, 400 for
// an invalid request, 503 (with Retry-After when the queue is full) when the store cannot
// serve; never a paid upstream call in its place.
func tapeError(w http.ResponseWriter, err error) {
	e := &apiError{http.StatusServiceUnavailable, "api_error", "tape_storage", "agent-rewind gateway: " + err.Error()}
	retry := 0
	switch {
	case errors.Is(err, tape.ErrStrictMiss):
		e.status, e.typ, e.code = http.StatusConflict, "invalid_request_error", "tape_strict_miss"
	case errors.Is(err, tape.ErrEndOfTape):
		e.status, e.typ, e.code = http.StatusConflict, "invalid_request_error", "tape_end"
	case errors.Is(err, tape.ErrInvalid):
		e.status, e.typ, e.code = http.StatusBadRequest, "invalid_request_error", "tape_invalid"
	case errors.Is(err, tape.ErrQueueFull):
		e.typ, e.code, retry = "overloaded_error", "tape_queue_full", 1
	case errors.Is(err, tape.ErrConflict):
		e.code, retry = "tape_conflict", 1
	case errors.Is(err, tape.ErrStorage):
		retry = 1 // a database restarting, a disk filling: worth a retry
	case errors.Is(err, tape.ErrTampered), errors.Is(err, tape.ErrCorrupt):
		e.code = "tape_untrusted"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		e.code = "tape_interrupted"
	}
	e.write(w, retry)
}

// replayTape answers a call of api from the tape's cursor.
func (g *Gateway) replayTape(w http.ResponseWriter, r *http.Request, api API, body []byte, id identity, cur tapeCursor) {
	out := g.transform(w, api, body)
	release := func() {}
	if g.queue != nil {
		var err error
		if release, err = g.queue.Acquire(r.Context()); err != nil {
			tapeError(w, err)
			return
		}
	}
	rep, err := cur.Next(r.Context(), id.requestID, tapeRequest(r, api, out))
	release()
	if err != nil {
		g.countStoreError(err)
		tapeError(w, err)
		return
	}
	g.metrics.replays.Add(1)
	h := w.Header()
	for k, vs := range rep.Response.Header {
		h[k] = vs
	}
	how := "tape"
	if rep.Retried {
		how = "tape-retry"
	}
	h.Set(HeaderReplay, how)
	h.Set(HeaderTapePosition, strconv.FormatInt(rep.Position, 10))
	if !rep.Response.EventStream() {
		h.Set("Content-Length", strconv.Itoa(len(rep.Response.Body)))
	}
	w.WriteHeader(rep.Response.Status)
	w.Write(rep.Response.Body)
}

// recordTape forwards a Messages call and appends the exchange to the tape. Exchanges take
// turns (the queue); the response is held until its record is committed, so a client never
// gets a response the tape lost. A call whose request or response is over the eligibility
// limit passes through unrecorded, with a log line.
func (g *Gateway) recordTape(w http.ResponseWriter, r *http.Request, api API, body []byte, rec tapeRecorder) {
	out := g.transform(w, api, body)
	if len(out) > g.maxTapeBody {
		g.logf("tape: skip: %s %s: the request body is %d bytes, over the %d-byte eligibility limit: passed through unrecorded", r.Method, r.URL.Path, len(out), g.maxTapeBody)
		g.proxy.ServeHTTP(&firstByteWriter{ResponseWriter: w}, withBody(r, out, &exchange{how: "unrecorded"}))
		return
	}
	if g.queue != nil { // one process: exchanges take turns, so the tape's order is arrival order
		release, err := g.queue.Acquire(r.Context())
		if err != nil {
			tapeError(w, err)
			return
		}
		defer release()
	}
	ctx, cancel := context.WithTimeoutCause(r.Context(), g.upstreamTimeout,
		fmt.Errorf("the upstream call exceeded the gateway's absolute %s deadline", g.upstreamTimeout))
	defer cancel()
	x := &exchange{how: "recorded", start: time.Now()}
	g.metrics.misses.Add(1)
	hw := &holdWriter{rw: w, limit: g.maxTapeBody, onCross: func() {
		g.logf("tape: skip: %s %s: the response crossed the %d-byte eligibility limit mid-stream: the held bytes were flushed and the rest streams unrecorded", r.Method, r.URL.Path, g.maxTapeBody)
		w.Header().Set(HeaderReplay, "unrecorded")
	}}
	req := withBody(r, out, x).WithContext(context.WithValue(ctx, exchangeKey{}, x))
	if aborted := proxyHeld(g.proxy, hw, req); aborted {
		panic(http.ErrAbortHandler) // the upstream stream broke, or the client left: nothing to record
	}
	if r.Context().Err() != nil {
		return // the client left: its upstream call was cancelled, nothing is recorded
	}
	if hw.passing || x.failed {
		hw.release() // a 502 from the gateway itself, or the rest of an oversized stream
		return
	}
	respHeader := x.header.Clone()
	stripControlHeaders(respHeader)
	pos, err := rec.Record(context.WithoutCancel(r.Context()), tape.Call{
		Request:  tapeRequest(r, api, out),
		Response: tape.Response{Status: hw.status, Header: respHeader, Body: hw.buf},
	})
	if err != nil {
		if errors.Is(err, tape.ErrTooLarge) {
			g.logf("tape: skip: %s %s: %v", r.Method, r.URL.Path, err)
			w.Header().Set(HeaderReplay, "unrecorded")
			hw.release()
			return
		}
		g.countStoreError(err)
		g.logf("tape: the response to %s %s was not served: %v", r.Method, r.URL.Path, err)
		tapeError(w, fmt.Errorf("the response could not be recorded, so it is not served: %w", err))
		return
	}
	w.Header().Set(HeaderTapePosition, strconv.FormatInt(pos, 10))
	hw.release()
}

// tapeRequest is the request as the tape records and matches it: the body the gateway
// forwards, matched without what does not change an OpenAI call's answer (keyBody), as
// exact replay keys it, so that a rerun of a client that labels every session afresh (Codex
// CLI's prompt_cache_key, its messages' ids) replays its recording.
func tapeRequest(r *http.Request, api API, body []byte) tape.Request {
	req := tape.Request{Method: r.Method, Path: r.URL.RequestURI(), Header: r.Header, Body: body}
	if kb := keyBody(api, body); len(kb) != len(body) {
		req.MatchBody = kb
	}
	return req
}

// proxyHeld runs the proxy into a holding writer, turning the proxy's abort of a broken
// stream into a result.
func proxyHeld(p http.Handler, hw *holdWriter, r *http.Request) (aborted bool) {
	defer func() {
		if v := recover(); v != nil {
			if v != http.ErrAbortHandler {
				panic(v)
			}
			aborted = true
		}
	}()
	p.ServeHTTP(hw, r)
	return false
}

// holdWriter holds a response (status, headers in the real writer's map, body) until
// release, up to limit body bytes. A body that grows past limit is let go mid-stream: the
// held part is written and flushed, and the rest passes straight through. It keeps
// http.Flusher (a no-op while holding).
type holdWriter struct {
	rw      http.ResponseWriter
	limit   int
	onCross func()

	status  int
	buf     []byte
	passing bool
}

func (h *holdWriter) Header() http.Header { return h.rw.Header() }

func (h *holdWriter) WriteHeader(code int) {
	if code >= 100 && code < 200 && code != http.StatusSwitchingProtocols {
		h.rw.WriteHeader(code) // informational: goes out at once
		return
	}
	if h.status == 0 {
		h.status = code
	}
}

func (h *holdWriter) Write(p []byte) (int, error) {
	if h.status == 0 {
		h.status = http.StatusOK
	}
	if h.passing {
		return h.rw.Write(p)
	}
	if len(h.buf)+len(p) <= h.limit {
		h.buf = append(h.buf, p...)
		return len(p), nil
	}
	h.passing = true
	if h.onCross != nil {
		h.onCross()
	}
	h.rw.WriteHeader(h.status)
	if _, err := h.rw.Write(h.buf); err != nil {
		return 0, err
	}
	h.buf = nil
	n, err := h.rw.Write(p)
	if err == nil {
		err = http.NewResponseController(h.rw).Flush()
	}
	return n, err
}

// Flush flushes once the response is no longer held.
func (h *holdWriter) Flush() {
	if h.passing {
		http.NewResponseController(h.rw).Flush()
	}
}

// Unwrap lets http.ResponseController reach the real writer.
func (h *holdWriter) Unwrap() http.ResponseWriter { return h.rw }

// release writes what is held (if it was not let go already) and flushes.
func (h *holdWriter) release() {
	if !h.passing {
		if h.status == 0 {
			h.status = http.StatusOK
		}
		if _, ok := h.rw.Header()["Content-Length"]; ok || !(tape.Response{Header: h.rw.Header()}).EventStream() {
			h.rw.Header().Set("Content-Length", strconv.Itoa(len(h.buf)))
		}
		h.rw.WriteHeader(h.status)
		h.rw.Write(h.buf)
		h.passing = true
	}
	http.NewResponseController(h.rw).Flush()
}

// inStateDir reports whether dir is inside the workspace's state directory (the folder of
// the savings receipt), which the embedding program prepares before anything is written there.
func inStateDir(dir, savingsFile string) bool {
	if savingsFile == "" {
		return false
	}
	rel, err := filepath.Rel(filepath.Dir(savingsFile), dir)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
