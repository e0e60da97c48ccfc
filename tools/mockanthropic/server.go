package mockanthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure a Server. The zero value serves recordings as fast as it can.
type Options struct {
	// EventDelay is the pause before each streamed event after the first, so that a proxy that
	// buffers a stream shows up as a later first byte (and a long stream can be held open).
	EventDelay time.Duration
	// Fallback answers a request that has no recording with a Message body. Nil: Synthesize.
	Fallback func(request []byte) ([]byte, error)
	// OnRequest, when set, is called with every request to /v1/messages and its body before it
	// is answered (for example to check which headers reached the upstream). It must be safe
	// for concurrent use.
	OnRequest func(r *http.Request, body []byte)
}

// Server is the mock upstream. Create it with New, add recordings, then Start it (or mount
// Handler in an httptest.Server).
type Server struct {
	// URL is the base URL ("http://127.0.0.1:PORT") once started.
	URL string

	opts     Options
	mu       sync.RWMutex
	recorded map[string][]byte // RequestKey → Message
	hits     atomic.Int64
	missed   atomic.Int64
	seq      atomic.Int64
	keyHits  sync.Map // RequestKey → *atomic.Int64
	pathHits sync.Map // path → *atomic.Int64 (the OpenAI paths)
	srv      *http.Server
	ln       net.Listener
}

// New returns a server with no recordings, not yet listening.
func New(opts Options) *Server {
	return &Server{opts: opts, recorded: map[string][]byte{}}
}

// ErrConflict reports two different responses recorded for one request.
var ErrConflict = errors.New("mockanthropic: a different response is already recorded for this request")

// Add records message as the response to request. Both must be JSON objects; message must be
// renderable as a stream (see Events). Recording the same pair twice is allowed.
func (s *Server) Add(request, message []byte) error {
	key, err := RequestKey(request)
	if err != nil {
		return err
	}
	if _, err := Events(message); err != nil {
		return err
	}
	message = bytes.TrimSpace(message)
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.recorded[key]; ok && !bytes.Equal(old, message) {
		return fmt.Errorf("%w (key %s)", ErrConflict, key)
	}
	s.recorded[key] = bytes.Clone(message)
	return nil
}

// LoadDir adds every recording in dir: each NN.request.json with its NN.response.json. It
// returns the number of request files read (repeats included).
func (s *Server) LoadDir(dir string) (int, error) {
	reqs, err := filepath.Glob(filepath.Join(dir, "*.request.json"))
	if err != nil {
		return 0, err
	}
	if len(reqs) == 0 {
		return 0, fmt.Errorf("mockanthropic: no *.request.json files in %s", dir)
	}
	sort.Strings(reqs)
	for _, rp := range reqs {
		req, err := os.ReadFile(rp)
		if err != nil {
			return 0, err
		}
		msg, err := os.ReadFile(strings.TrimSuffix(rp, ".request.json") + ".response.json")
		if err != nil {
			return 0, fmt.Errorf("mockanthropic: recording without its response: %w", err)
		}
		if err := s.Add(req, msg); err != nil {
			return 0, fmt.Errorf("%s: %w", rp, err)
		}
	}
	return len(reqs), nil
}

// Start listens on 127.0.0.1 (a free port) and serves in the background until Close.
func (s *Server) Start() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	s.ln = ln
	s.URL = "http://" + ln.Addr().String()
	s.srv = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	return nil
}

// Close stops the server and closes open connections.
func (s *Server) Close() error {
	if s.srv == nil {
		return nil
	}
	return s.srv.Close()
}

// Hits returns how many model calls (/v1/messages, /v1/responses, /v1/chat/completions) were answered with a response (recorded or
// fallback): the calls that would have reached, and been billed by, the real API.
func (s *Server) Hits() int64 { return s.hits.Load() }

// Misses returns how many of those calls had no recording and were answered by the fallback.
func (s *Server) Misses() int64 { return s.missed.Load() }

// KeyHits returns how many calls were answered for the request whose RequestKey is key.
func (s *Server) KeyHits(key string) int64 {
	if v, ok := s.keyHits.Load(key); ok {
		return v.(*atomic.Int64).Load()
	}
	return 0
}

// Handler returns the server's HTTP handler.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serve) }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if p := r.URL.Path; p == "/v1/responses" || p == "/v1/chat/completions" || strings.HasPrefix(p, "/v1/responses/") {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 32<<20))
		if err != nil {
			openAIError(w, http.StatusRequestEntityTooLarge, "invalid_request_error", "mock upstream: "+err.Error())
			return
		}
		if s.opts.OnRequest != nil {
			s.opts.OnRequest(r, body)
		}
		s.serveOpenAI(w, r, body)
		return
	}
	if r.URL.Path != "/v1/messages" {
		apiError(w, http.StatusNotFound, "not_found_error", "mock upstream: only /v1/messages is served, not "+r.URL.Path)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		apiError(w, http.StatusMethodNotAllowed, "invalid_request_error", "mock upstream: /v1/messages takes POST, not "+r.Method)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 32<<20))
	if err != nil {
		apiError(w, http.StatusRequestEntityTooLarge, "request_too_large", "mock upstream: "+err.Error())
		return
	}
	if s.opts.OnRequest != nil {
		s.opts.OnRequest(r, body)
	}
	if r.Header.Get("x-api-key") == "" && r.Header.Get("Authorization") == "" {
		apiError(w, http.StatusUnauthorized, "authentication_error", "mock upstream: x-api-key header is required")
		return
	}
	req, err := decodeObject(body)
	if err != nil {
		apiError(w, http.StatusBadRequest, "invalid_request_error", "mock upstream: "+err.Error())
		return
	}
	key, _ := RequestKey(body)
	s.mu.RLock()
	msg, ok := s.recorded[key]
	s.mu.RUnlock()
	if !ok {
		fallback := s.opts.Fallback
		if fallback == nil {
			fallback = Synthesize
		}
		if msg, err = fallback(body); err != nil {
			apiError(w, http.StatusInternalServerError, "api_error", "mock upstream fallback: "+err.Error())
			return
		}
		s.missed.Add(1)
	}
	s.hits.Add(1)
	c, _ := s.keyHits.LoadOrStore(key, new(atomic.Int64))
	c.(*atomic.Int64).Add(1)

	w.Header().Set("request-id", fmt.Sprintf("req_mock_%08d", s.seq.Add(1)))
	if !streaming(req) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", fmt.Sprint(len(msg)))
		w.WriteHeader(http.StatusOK)
		w.Write(msg)
		return
	}
	evs, err := Events(msg)
	if err != nil {
		apiError(w, http.StatusInternalServerError, "api_error", "mock upstream: "+err.Error())
		return
	}
	chunks := make([][]byte, len(evs))
	for i, e := range evs {
		chunks[i] = e.Bytes()
	}
	s.stream(w, r, chunks)
}

// stream writes an event stream, one chunk (an event) at a time, each flushed, with
// Options.EventDelay before each after the first; it stops when the client leaves.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, chunks [][]byte) {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	for i, c := range chunks {
		if i > 0 && s.opts.EventDelay > 0 {
			select {
			case <-time.After(s.opts.EventDelay):
			case <-r.Context().Done():
				return
			}
		}
		if _, err := w.Write(c); err != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
}

// apiError writes an error in the API's shape.
func apiError(w http.ResponseWriter, status int, typ, msg string) {
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// Synthesize is the default fallback: a short end_turn text reply whose id is derived from the
// request's key, and whose usage counts about one input token per four bytes of the request.
func Synthesize(request []byte) ([]byte, error) {
	req, err := decodeObject(request)
	if err != nil {
		return nil, err
	}
	key, err := RequestKey(request)
	if err != nil {
		return nil, err
	}
	model, _ := req["model"].(string)
	return json.Marshal(map[string]any{
		"id": "msg_mock_" + key[:24], "type": "message", "role": "assistant", "model": model,
		"content":     []any{map[string]any{"type": "text", "text": "OK."}},
		"stop_reason": "end_turn", "stop_sequence": nil,
		"usage": map[string]any{
			"input_tokens": (len(request) + 3) / 4, "cache_creation_input_tokens": 0,
			"cache_read_input_tokens": 0, "output_tokens": 3, "service_tier": "standard",
		},
	})
}
