package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/agent-rewind/rewind/tape"
	"github.com/agent-rewind/rewind/tape/pgtape"
)

// HeaderKey carries a team gateway's API key. It is an x-rewind-* header, so it is stripped
// before the upstream with the others; the provider's credential travels in its own headers.
const HeaderKey = "X-Rewind-Key"

// team is the gateway's team mode: one PostgreSQL database shared by every replica, holding
// each tenant's replays and tapes (sealed under the tenant's key) and the API keys.
type team struct {
	store *pgtape.Store

	mu    sync.Mutex
	tapes map[string]*pgtape.Tape // opened tenants; a tenant is checked once per process
}

// teamTape reports whether a team gateway records or replays the ordered tape (an epoch, a
// replay cursor or --record-only was given) rather than serving exact replays.
func (c *Config) teamTape() bool {
	return c.Epoch.Source != SourceDefault || c.ReplayCursor.Value != "" || c.RecordOnly.Value
}

// openTeam connects to the database and checks its schema. A schema that is not current fails
// the start (replicas never migrate: run `agent-rewind gateway migrate`); a database that does
// not answer yet does not: the replica starts, /readyz says why it is not ready, and requests
// get 503 until the database is back.
func (g *Gateway) openTeam() error {
	cfg := g.cfg
	s, err := pgtape.Open(context.Background(), pgtape.Options{
		URL: cfg.DatabaseURL.Value, DeploymentKey: cfg.DeploymentKey,
		Tape: tape.Options{AnswerHeaders: AnswerHeaders},
	})
	if err != nil {
		return err
	}
	if err := s.CheckKey(); err != nil {
		s.Close()
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.CheckSchema(ctx); err != nil {
		if !errors.Is(err, tape.ErrStorage) && !errors.Is(err, tape.ErrConflict) {
			s.Close()
			return err
		}
		g.logf("database: %v: starting anyway; /readyz answers 503 until it is reachable", err)
	}
	g.team = &team{store: s, tapes: map[string]*pgtape.Tape{}}
	out := cfg.Log
	if out == nil {
		out = io.Discard
	}
	g.slog = slog.New(slog.NewJSONHandler(&lockedWriter{g: g, w: out}, nil))
	// Replicas must compute one replay key for one request, so the credential MAC key comes
	// from the deployment key instead of being drawn at random.
	g.credKey = s.DerivedKey("gateway credential mac")
	g.maxTapeBody = tape.DefaultMaxBody
	return nil
}

// lockedWriter serialises the access log's writes with the gateway's other log lines.
type lockedWriter struct {
	g *Gateway
	w io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.g.logMu.Lock()
	defer l.g.logMu.Unlock()
	return l.w.Write(p)
}

// tape returns tenant's tape, opening it (and checking its key) on first use.
func (t *team) tape(ctx context.Context, tenant string) (*pgtape.Tape, error) {
	t.mu.Lock()
	tp, ok := t.tapes[tenant]
	t.mu.Unlock()
	if ok {
		return tp, nil
	}
	tp, err := t.store.Tape(ctx, tenant)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	t.tapes[tenant] = tp
	t.mu.Unlock()
	return tp, nil
}

// authenticate returns the tenant of the request's API key. With later, a key this replica
// has accepted before is not checked here (its tenant never changes): checkKey or
// lookupShared checks that it is still live, in the round trip the request makes anyway, and
// unchecked is the key they must check.
func (g *Gateway) authenticate(r *http.Request, later bool) (tenant, unchecked string, aerr *apiError, retry int) {
	vs := r.Header.Values(HeaderKey)
	if len(vs) != 1 {
		return "", "", &apiError{http.StatusUnauthorized, "authentication_error", "gateway_key_missing",
			"agent-rewind gateway: this team gateway needs its API key in one x-rewind-key header (create one with `agent-rewind gateway keys create --tenant T`); the provider's key still goes in x-api-key"}, 0
	}
	if later {
		if tenant, ok := g.team.store.KnownTenant(vs[0]); ok {
			return tenant, vs[0], nil, 0
		}
	}
	tenant, err := g.team.store.Authenticate(r.Context(), vs[0])
	if err != nil {
		aerr, retry = g.keyError(err)
	}
	return tenant, "", aerr, retry
}

// keyError answers a key that was refused (401) or could not be checked (503).
func (g *Gateway) keyError(err error) (*apiError, int) {
	if errors.Is(err, pgtape.ErrUnauthenticated) {
		return &apiError{http.StatusUnauthorized, "authentication_error", "gateway_key_refused", "agent-rewind gateway: " + err.Error()}, 0
	}
	g.metrics.dbErrors.Add(1)
	g.logf("database: check an API key: %v", err)
	return &apiError{http.StatusServiceUnavailable, "api_error", "database_unavailable", "agent-rewind gateway: the database did not answer, so the key could not be checked: retry"}, 1
}

// checkKey checks that a key whose check authenticate left for later is still live, before a
// replay from memory is served; false: it answered the refusal.
func (g *Gateway) checkKey(w http.ResponseWriter, r *http.Request, id identity) bool {
	if id.unchecked == "" {
		return true
	}
	if _, err := g.team.store.Authenticate(r.Context(), id.unchecked); err != nil {
		aerr, retry := g.keyError(err)
		aerr.write(w, retry)
		return false
	}
	return true
}

// storedEntry is a replay entry as the replay store keeps it (sealed by pgtape).
type storedEntry struct {
	API    API         `json:"api,omitempty"` // absent: Messages (records made before OpenAI)
	Status int         `json:"status"`
	Header http.Header `json:"header"`
	Body   []byte      `json:"body"`
}

// lookupShared finds a replay in the shared store and caches it in memory, checking the key
// authenticate left unchecked in the same statement. err is a refused key, or a database or
// integrity failure (sharedError answers it): no upstream call is made.
func (g *Gateway) lookupShared(ctx context.Context, id identity, key [32]byte) (*entry, error) {
	tenant := id.tenant
	tp, err := g.team.tape(ctx, tenant)
	if err != nil {
		return nil, err
	}
	var v []byte
	var found bool
	if id.unchecked != "" {
		v, found, err = tp.LookupChecked(ctx, id.unchecked, key[:])
	} else {
		v, found, err = tp.Lookup(ctx, key[:])
	}
	if err != nil || !found {
		return nil, err
	}
	var se storedEntry
	if err := json.Unmarshal(v, &se); err != nil {
		return nil, fmt.Errorf("%w: the replay %x of tenant %q authenticates but does not decode: %v", tape.ErrCorrupt, key[:8], tenant, err)
	}
	if se.API == "" {
		se.API = APIMessages
	}
	e := newEntry(key, se.API, se.Status, se.Header, se.Body)
	if e == nil {
		return nil, fmt.Errorf("%w: the replay %x of tenant %q is not a complete %s response", tape.ErrCorrupt, key[:8], tenant, se.API)
	}
	g.mem.put(e)
	return e, nil
}

// sharedError answers a failed lookupShared: 401 for a refused key, else as tapeError.
func (g *Gateway) sharedError(w http.ResponseWriter, err error) {
	if errors.Is(err, pgtape.ErrUnauthenticated) {
		aerr, retry := g.keyError(err)
		aerr.write(w, retry)
		return
	}
	g.countStoreError(err)
	g.logf("database: replay lookup: %v", err)
	tapeError(w, err)
}

// storeShared writes a new replay to the shared store. The response has already gone out; a
// failure is logged and the next identical request pays again.
func (g *Gateway) storeShared(ctx context.Context, tenant string, e *entry) {
	tp, err := g.team.tape(ctx, tenant)
	if err == nil {
		v, _ := json.Marshal(storedEntry{API: e.api, Status: e.status, Header: e.header, Body: e.body})
		err = tp.Store(ctx, e.key[:], v)
	}
	if err != nil {
		g.metrics.dbErrors.Add(1)
		g.logf("database: the replay of a response was not stored: %v", err)
	}
}

// ready reports whether the gateway can serve: not draining, and in team mode the database
// answers with the current schema.
func (g *Gateway) ready(ctx context.Context) error {
	if g.draining.Load() {
		return errors.New("draining: the gateway is shutting down; send new requests to another replica")
	}
	if g.team == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return g.team.store.CheckSchema(ctx)
}

// serveHealth answers /healthz (the process is up) and /readyz (it can serve).
func (g *Gateway) serveHealth(w http.ResponseWriter, r *http.Request) {
	status, body := http.StatusOK, map[string]string{"status": "ok"}
	if r.URL.Path == "/readyz" {
		if err := g.ready(r.Context()); err != nil {
			status, body = http.StatusServiceUnavailable, map[string]string{"status": "not ready", "reason": err.Error()}
			w.Header().Set("Retry-After", "1")
		}
	}
	b, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}
