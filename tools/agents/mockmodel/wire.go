package mockmodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"
)

// What the APIs' writers share: JSON answers, server-sent events, ids and token counts.

// writeJSON answers v as a JSON body.
func writeJSON(w http.ResponseWriter, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	_, err = w.Write(b)
	return err
}

// sse writes server-sent events, flushing each so the client reads it at once. The first
// write error is kept in err and ends the stream.
type sse struct {
	w   http.ResponseWriter
	err error
}

func newSSE(w http.ResponseWriter) *sse {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &sse{w: w}
}

// send writes one event: an "event:" line when event is not "", then data as JSON (a string
// is written as it is, for sentinels such as Chat Completions' [DONE]).
func (s *sse) send(event string, data any) {
	if s.err != nil {
		return
	}
	var b []byte
	if raw, ok := data.(string); ok {
		b = []byte(raw)
	} else if b, s.err = json.Marshal(data); s.err != nil {
		return
	}
	if event != "" {
		_, s.err = fmt.Fprintf(s.w, "event: %s\n", event)
	}
	if s.err == nil {
		_, s.err = fmt.Fprintf(s.w, "data: %s\n\n", b)
	}
	if f, ok := s.w.(http.Flusher); ok && s.err == nil {
		f.Flush()
	}
}

var idCounter atomic.Int64

// nextID returns an id unique in this process, such as "resp_7".
func nextID(prefix string) string { return fmt.Sprintf("%s%d", prefix, idCounter.Add(1)) }

// tokens is a token count for n bytes, at the usual four bytes a token: clients show usage and
// some refuse an answer without it, but nothing here bills by it.
func tokens(n int) int { return (n + 3) / 4 }

// turnSize is the size in bytes of what a turn says.
func turnSize(t Turn) int {
	n := len(t.Text)
	for _, c := range t.ToolCalls {
		n += len(c.Name) + len(c.Args)
	}
	return n
}

func unixNow() int64 { return time.Now().Unix() }
