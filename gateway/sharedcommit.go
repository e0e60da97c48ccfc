package gateway

import (
	"context"
	"net/http"
)

// sharedCommit is a team gateway's store of one response in the shared replay store,
// overlapped with relaying the response. The guarantee it keeps: no client has a whole
// response that another replica could not replay, so no replica pays again for it. All of
// the response but its end is sent (flushed) before the store's round trip, so the client
// reads it meanwhile; only the end waits for the commit: the last byte of a body of known
// length (tailWriter), or the terminating chunk of a chunked one (an event stream), which
// the server writes when the handler returns. The store runs in the handler's goroutine: a
// goroutine of its own measured no faster on a busy 2-core machine.
type sharedCommit struct {
	g      *Gateway
	ctx    context.Context
	x      *exchange
	tenant string
	tail   *tailWriter
	entry  *entry // the record, once start found the response recordable
}

func (g *Gateway) newSharedCommit(w http.ResponseWriter, r *http.Request, x *exchange, tenant string) *sharedCommit {
	return &sharedCommit{g: g, ctx: context.WithoutCancel(r.Context()), x: x, tenant: tenant, tail: &tailWriter{ResponseWriter: w}}
}

// start records the complete body (the status and headers are the exchange's), called when
// the upstream's body ends.
func (c *sharedCommit) start(body []byte) {
	c.entry = newEntry(c.x.key, c.x.api, c.x.status, c.x.header, body)
}

// finish sends all of the response but its end, stores the record, caches e (the record
// forward returns; nil when the exchange did not end well) in memory, and lets the end go.
func (c *sharedCommit) finish(e *entry) *entry {
	if c.entry != nil {
		http.NewResponseController(c.tail.ResponseWriter).Flush()
		c.g.storeShared(c.ctx, c.tenant, c.entry)
	}
	if e != nil {
		c.g.mem.put(e)
	}
	c.tail.release()
	return e
}

// tailWriter relays a response of known length (Content-Length) but its last byte, which
// release writes: until then the client cannot have the whole response. A response of
// unknown length (chunked: an event stream) passes through whole, since its end is the
// terminating chunk the server writes after the handler returns. It keeps http.Flusher.
type tailWriter struct {
	http.ResponseWriter
	decided, hold bool
	held          [1]byte
	holding       bool
}

func (t *tailWriter) Write(p []byte) (int, error) {
	if !t.decided {
		t.decided = true
		_, t.hold = t.Header()["Content-Length"]
	}
	if !t.hold || len(p) == 0 {
		return t.ResponseWriter.Write(p)
	}
	if t.holding {
		if _, err := t.ResponseWriter.Write(t.held[:]); err != nil {
			return 0, err
		}
		t.holding = false
	}
	if n, err := t.ResponseWriter.Write(p[:len(p)-1]); err != nil {
		return n, err
	}
	t.held[0], t.holding = p[len(p)-1], true
	return len(p), nil
}

// Flush flushes what was written (not the held byte).
func (t *tailWriter) Flush() { http.NewResponseController(t.ResponseWriter).Flush() }

// Unwrap lets http.ResponseController reach the real writer.
func (t *tailWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

// release writes the held byte; later writes pass through.
func (t *tailWriter) release() {
	t.hold = false
	t.decided = true
	if t.holding {
		t.holding = false
		t.ResponseWriter.Write(t.held[:])
	}
}
