package gateway

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"time"
)

// HeaderLogID, on a team gateway's responses, is the id of the request's access-log line, for
// a caller to quote when asking an operator about one call.
const HeaderLogID = "X-Rewind-Log-Id"

// statusWriter remembers the status a handler sent; it keeps http.Flusher and Unwrap.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 && code >= 200 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(p []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(p)
}

func (s *statusWriter) Flush() { http.NewResponseController(s.ResponseWriter).Flush() }

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// newLogID is 8 random bytes in hexadecimal.
func newLogID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// accessLog writes one structured line (log/slog, JSON) per request of a team gateway: its id,
// tenant, method, path, status, how it was answered, and its duration. It runs deferred, so a
// stream aborted mid-way is logged too. No header, body or key is logged.
func (g *Gateway) accessLog(id, tenant string, r *http.Request, w *statusWriter, start time.Time) {
	g.slog.LogAttrs(r.Context(), slog.LevelInfo, "request",
		slog.String("id", id),
		slog.String("tenant", tenant),
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
		slog.Int("status", w.status),
		slog.String("replay", w.Header().Get(HeaderReplay)),
		slog.Float64("ms", float64(time.Since(start).Microseconds())/1000))
}
