package ui

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"strconv"
	"sync"

	"github.com/agent-rewind/rewind/cli/internal/workspace"
	"github.com/agent-rewind/rewind/snapshot"
)

//go:embed assets
var assets embed.FS

// page is parsed on first use, not at start: every agent-rewind process links this package, and
// most never serve the page.
var page = sync.OnceValue(func() *template.Template {
	return template.Must(template.ParseFS(assets, "assets/index.html"))
})

// Server is the web UI of one workspace.
type Server struct {
	ws    *workspace.Workspace
	store *snapshot.Store
	token string // first path segment of every address
	csrf  string // required on every POST
	addr  string // host:port served, set by Listen

	mu    sync.Mutex                      // serialises use of store, which one command normally owns
	sizes map[string]*snapshot.DiffResult // change since the parent, by checkpoint id (immutable)

	launch launch // the browser's launch file (launch.go), written before the server serves
}

// New returns the UI of the workspace w (opened by the caller, who closes it after the server).
func New(w *workspace.Workspace) (*Server, error) {
	st, err := w.Snapshots(nil)
	if err != nil {
		return nil, err
	}
	return &Server{ws: w, store: st, token: randomToken(), csrf: randomToken(), sizes: map[string]*snapshot.DiffResult{}}, nil
}

// Listen opens the server's socket on 127.0.0.1 (port 0: any free port).
func (s *Server) Listen(port int) (net.Listener, error) {
	if port < 0 || port > 65535 {
		return nil, fmt.Errorf("port %d is not a TCP port (give 1 to 65535, or 0 for any free one)", port)
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("listen on 127.0.0.1:%d: %w (choose another --port, or 0 for any free one)", port, err)
	}
	s.addr = l.Addr().String()
	return l, nil
}

// URL is the page's address, token included: what a person opens.
func (s *Server) URL() string { return "http://" + s.addr + "/" + s.token + "/" }

// Handler serves the page and its API behind the guard (security.go).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(assets, "assets")
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(static)))
	mux.HandleFunc("GET /{$}", s.index)
	mux.HandleFunc("GET /api/version", s.version)
	mux.HandleFunc("GET /api/timeline", s.timeline)
	mux.HandleFunc("GET /api/diff", s.diff)
	mux.HandleFunc("GET /api/file", s.fileDiff)
	mux.HandleFunc("POST /api/restore", s.restore)
	mux.HandleFunc("POST /api/rewind", s.rewind)
	mux.HandleFunc("GET /api/effects", s.effects)
	mux.HandleFunc("POST /api/release", s.release)
	mux.HandleFunc("GET /api/chain", s.chain)
	mux.HandleFunc("GET /api/export", s.export)
	mux.HandleFunc("GET /api/savings", s.savings)
	return s.guard(mux)
}

func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	s.RemoveLaunchFile() // the browser came: the address needs to be kept nowhere any more
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	page().Execute(w, map[string]string{"CSRF": s.csrf, "Root": s.ws.Root, "Store": s.ws.Meta})
}

// apiError is the JSON body of a failed API call.
type apiError struct {
	Error string `json:"error"`
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// fail answers an API call with err: 404 for an unknown checkpoint or path, 400 for a refused
// path or a bad request, 500 otherwise; the message is the store's, which says what to do.
func fail(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, snapshot.ErrNotFound), errors.Is(err, snapshot.ErrNoSuchPath), errors.Is(err, fs.ErrNotExist):
		code = http.StatusNotFound
	case errors.Is(err, snapshot.ErrUnsafePath), errors.Is(err, snapshot.ErrAmbiguous), errors.Is(err, errBadRequest):
		code = http.StatusBadRequest
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(apiError{err.Error()})
}

var errBadRequest = errors.New("bad request")

// param returns the query parameter name of r, which must be given: what says what it is.
func param(r *http.Request, name, what string) (string, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return "", fmt.Errorf("%w: %s needs %s=… (%s)", errBadRequest, r.URL.Path, name, what)
	}
	return v, nil
}

// readBody decodes a POST's JSON body (at most 1 MiB) into v.
func readBody(r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: the body is not the expected JSON: %v", errBadRequest, err)
	}
	return nil
}
