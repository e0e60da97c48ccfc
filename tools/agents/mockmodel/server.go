package mockmodel

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
)

// api is one model API the server speaks: it reads a request into a Conversation and writes a
// Turn back in that API's wire form (JSON, or server-sent events when c.Stream).
type api interface {
	parse(r *http.Request, body []byte) (Conversation, error)
	write(w http.ResponseWriter, c *Conversation, t Turn) error
}

// routes maps a ServeMux pattern to the API served there. Each API's file adds its own routes
// in an init function, so that adding an API is one new file.
var routes = map[string]api{}

// Exchange is one request the server answered, and its answer.
type Exchange struct {
	Conversation Conversation
	Turn         Turn
	Err          string // why the request could not be read or answered ("" when it was)
}

// Server is a scripted model on 127.0.0.1 that speaks every registered API on one port and
// logs every exchange, so a test can read what the client sent the model.
type Server struct {
	URL string // "http://127.0.0.1:PORT"

	script Script
	srv    *http.Server
	ln     net.Listener
	mu     sync.Mutex
	log    []Exchange
}

// MaxBody bounds a request body the server reads; clients send their whole history each time.
const MaxBody = 64 << 20

// Start serves script on a free loopback port until Close.
func Start(script Script) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("mockmodel: listen on 127.0.0.1: %w", err)
	}
	s := &Server{URL: "http://" + ln.Addr().String(), script: script, ln: ln}
	mux := http.NewServeMux()
	for pattern, a := range routes {
		mux.HandleFunc(pattern, s.handler(a))
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		what := r.Method + " " + r.URL.Path
		if r.Method == http.MethodConnect {
			what += r.Host // a client that has the mock as its proxy, trying to reach that host
		}
		s.record(Exchange{Conversation: Conversation{Path: r.URL.Path}, Err: "no API is served at " + what})
		http.Error(w, "mockmodel: nothing is served at "+what, http.StatusNotFound)
	})
	s.srv = &http.Server{Handler: mux}
	go s.srv.Serve(ln) // returns when Close is called
	return s, nil
}

func (s *Server) handler(a api) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
		if err == nil && len(body) > MaxBody {
			err = fmt.Errorf("body over %d bytes", MaxBody)
		}
		var c Conversation
		if err == nil {
			c, err = a.parse(r, body)
		}
		c.Path, c.Raw = r.URL.Path, body
		if err != nil {
			s.record(Exchange{Conversation: c, Err: err.Error()})
			http.Error(w, "mockmodel: "+err.Error(), http.StatusBadRequest)
			return
		}
		t := s.script(&c)
		ex := Exchange{Conversation: c, Turn: t}
		if err := a.write(w, &c, t); err != nil {
			ex.Err = "answer: " + err.Error()
		}
		s.record(ex)
	}
}

func (s *Server) record(ex Exchange) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, ex)
}

// Log returns every exchange so far, oldest first.
func (s *Server) Log() []Exchange {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Exchange(nil), s.log...)
}

// Close stops the server.
func (s *Server) Close() error {
	err := s.srv.Close()
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
