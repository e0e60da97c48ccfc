package gateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agent-rewind/rewind/cacheplan"
	"github.com/agent-rewind/rewind/tape"
	"golang.org/x/sync/singleflight"
)

// MaxRequestBody is the largest POST /v1/messages body the gateway reads (the provider's
// own request limit is 32 MB); a larger one is answered 413.
const MaxRequestBody = 32 << 20

// Gateway is the reverse proxy: an http.Handler in front of the upstream. Create it with
// New, serve it with Serve (or any http.Server), and Close it.
type Gateway struct {
	cfg             *Config
	upstream        *url.URL
	tenant          string
	preserve, prune bool
	proxy           *httputil.ReverseProxy
	credKey         []byte
	credMAC         hash.Hash // HMAC-SHA256 keyed with credKey, cloned for each replay key

	mem    *memoryStore // memory replay; nil in tape mode
	flight singleflight.Group
	ledger *ledger // nil without a savings file

	team *team // team mode (--storage postgres); g.mem is its cache

	tape            *tape.Tape
	recorder        tapeRecorder // tape record mode (SQLite)
	cursor          tapeCursor   // tape replay mode (SQLite)
	queue           *tape.Queue
	maxTapeBody     int
	upstreamTimeout time.Duration

	tlsConfig *tls.Config // HTTPS, when a certificate is configured
	metrics   metrics
	slog      *slog.Logger // team mode's structured access log (JSON lines on Config.Log)

	draining atomic.Bool // set when Serve begins its shutdown: /readyz answers 503

	logMu     sync.Mutex
	closeOnce sync.Once
	closeErr  error
}

// New builds the gateway for cfg (from Resolve, or DefaultConfig and changes). In tape mode
// it opens the tenant's tape and takes its recorder or cursor lock, so that a missing or
// wrong key, a corrupt store or a second process fails here, before anything listens.
func New(cfg *Config) (*Gateway, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	up, err := checkUpstream(cfg.Upstream.Value, cfg.Upstream.From)
	if err != nil {
		return nil, err
	}
	upstream, _ := url.Parse(up)
	if err := checkName("tenant", cfg.Tenant.Value, cfg.Tenant.From); err != nil {
		return nil, err
	}
	g := &Gateway{
		cfg: cfg, upstream: upstream, tenant: cfg.Tenant.Value,
		preserve: cfg.PreserveCache.Value, prune: cfg.PruneContext.Value,
		credKey:         make([]byte, 32),
		upstreamTimeout: cfg.UpstreamTimeout,
	}
	if g.upstreamTimeout <= 0 {
		g.upstreamTimeout = DefaultUpstreamTimeout
	}
	if _, err := rand.Read(g.credKey); err != nil {
		return nil, fmt.Errorf("draw the credential key: %w", err)
	}
	transport := cfg.Transport
	if transport == nil {
		transport = newTransport()
	}
	g.proxy = &httputil.ReverseProxy{
		Rewrite:   g.rewrite,
		Transport: inMemoryBodies{transport},
		// 0: the proxy flushes every write of an event stream or a body of unknown length
		// (so events go out as they arrive), and lets a body of known length go out in one
		// piece with its headers.
		FlushInterval:  0,
		BufferPool:     bufferPool{},
		ModifyResponse: g.modifyResponse,
		ErrorHandler:   g.proxyError,
		ErrorLog:       nil,
	}
	if cfg.TLSCert.Value != "" {
		cert, err := tls.LoadX509KeyPair(cfg.TLSCert.Value, cfg.TLSKey.Value)
		if err != nil {
			return nil, fmt.Errorf("load the TLS certificate %s and key %s: %w: give PEM files of one certificate and its private key", cfg.TLSCert.Value, cfg.TLSKey.Value, err)
		}
		g.tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	prices := cfg.Prices.Value
	if prices == nil {
		prices = DefaultPrices
	}
	switch cfg.Storage.Value {
	case StorageSQLite:
		if err := g.openTape(); err != nil {
			return nil, err
		}
	case StoragePostgres:
		if err := g.openTeam(); err != nil {
			return nil, err
		}
		g.mem = newMemoryStore(MaxMemoryTotal)
	default:
		g.mem = newMemoryStore(MaxMemoryTotal)
	}
	g.keyCredMAC() // credKey is final: drawn above, or derived from the deployment key in team mode
	if cfg.SavingsFile != "" || g.team != nil {
		info := PriceInfo{Source: PriceSource, Date: PriceDate}
		if cfg.Prices.Source == SourceFile {
			for m, p := range prices {
				if d, ok := DefaultPrices[m]; !ok || d != p {
					info.Overridden = append(info.Overridden, m)
				}
			}
			slices.Sort(info.Overridden)
		}
		var fleet fleetReceipt
		if g.team != nil {
			fleet = g.team.store // one receipt for the whole fleet, in the database
		}
		g.ledger = newLedger(cfg.SavingsFile, fleet, prices, info, cfg.Prepare, g.logf)
	}
	return g, nil
}

// DefaultConfig returns the configuration with every setting at its default, for a
// workspace root (the default tape directory is under it).
func DefaultConfig(workspace string) *Config { return defaults(workspace) }

// Config returns the configuration the gateway runs with.
func (g *Gateway) Config() *Config { return g.cfg }

// Close stops recording savings (writing what is pending) and closes the tape. Call it
// after the server has stopped.
func (g *Gateway) Close() error {
	g.closeOnce.Do(func() {
		var errs []error
		if g.ledger != nil {
			errs = append(errs, g.ledger.close())
		}
		if g.tape != nil {
			errs = append(errs, g.tape.Close())
		}
		if g.team != nil {
			g.team.store.Close()
		}
		g.closeErr = errors.Join(errs...)
	})
	return g.closeErr
}

// logf writes one log line.
func (g *Gateway) logf(format string, args ...any) {
	if g.cfg.Log == nil {
		return
	}
	g.logMu.Lock()
	defer g.logMu.Unlock()
	fmt.Fprintf(g.cfg.Log, "agent-rewind gateway: "+format+"\n", args...)
}

// newTransport is the upstream transport: keep-alive connections enough for many concurrent
// streams, HTTP/1.1, and no transparent compression (bodies pass as the upstream sends them).
// HTTP/1.1 as Anthropic's own SDKs speak it to the API: over TLS, Go's HTTP/2 client cost the
// gateway a third more CPU a call and nearly doubled its added latency (docs/benchmarks.md).
func newTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		Protocols:             http1Only(),
		MaxIdleConns:          512,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		DisableCompression:    true,
	}
}

// http1Only is HTTP/1.1 alone, plain and over TLS.
func http1Only() *http.Protocols {
	var p http.Protocols
	p.SetHTTP1(true)
	return &p
}

// bufferPool lends the reverse proxy its copy buffers.
type bufferPool struct{}

var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

func (bufferPool) Get() []byte  { return *copyBuffers.Get().(*[]byte) }
func (bufferPool) Put(b []byte) { copyBuffers.Put(&b) }

// ServeHTTP handles one request.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && (r.URL.Path == "/healthz" || r.URL.Path == "/readyz") {
		g.serveHealth(w, r)
		return
	}
	g.metrics.requests.Add(1)
	tenant, unchecked := g.tenant, ""
	if g.team != nil {
		id, start, sw := newLogID(), time.Now(), &statusWriter{ResponseWriter: w}
		w = sw
		w.Header().Set(HeaderLogID, id)
		defer func() { g.accessLog(id, tenant, r, sw, start) }()
		var aerr *apiError
		var retry int
		// A call of an understood API answered by replay or pass-through checks its key with
		// the lookup.
		if tenant, unchecked, aerr, retry = g.authenticate(r, apiOf(r) != "" && !g.cfg.teamTape()); aerr != nil {
			aerr.write(w, retry)
			return
		}
	}
	id, aerr := g.identify(r, tenant)
	if aerr != nil {
		aerr.write(w, 0)
		return
	}
	id.unchecked = unchecked
	replaying := g.cursor != nil || (g.team != nil && g.cfg.teamTape() && g.cfg.ReplayCursor.Value != "")
	api := apiOf(r)
	if api == "" {
		if replaying && !metadataCall(r) {
			(&apiError{http.StatusMethodNotAllowed, "invalid_request_error", "replay_refused",
				fmt.Sprintf("agent-rewind gateway: replaying a tape: %s %s is not on the tape and could change state upstream, so it is refused; GET and HEAD calls pass through; stop replaying (no --replay-cursor) to make it", r.Method, r.URL.Path)}).write(w, 0)
			return
		}
		g.proxy.ServeHTTP(&firstByteWriter{ResponseWriter: w}, r)
		return
	}
	body, err := readBody(w, r)
	if err != nil {
		g.bodyError(w, r, err)
		return
	}
	tapeMode := g.cursor != nil || g.recorder != nil || (g.team != nil && g.cfg.teamTape())
	if tapeMode && bypassReason(api, body) == bypassBackground {
		// A background response is answered by polling GET /v1/responses/{id} upstream,
		// which no tape holds: recording it would replay a "queued" that never completes.
		if replaying {
			(&apiError{http.StatusMethodNotAllowed, "invalid_request_error", "replay_refused",
				"agent-rewind gateway: replaying a tape: a background response (\"background\": true) is never on the tape (its answer comes by polling the upstream) and would start work upstream, so it is refused; stop replaying (no --replay-cursor) to make it"}).write(w, 0)
			return
		}
		g.logf("tape: skip: %s %s: a background response is not recorded (its answer comes by polling upstream): passed through unrecorded", r.Method, r.URL.Path)
		w.Header().Set(HeaderBypass, bypassBackground)
		g.proxy.ServeHTTP(&firstByteWriter{ResponseWriter: w}, withBody(r, g.transform(w, api, body), &exchange{how: "unrecorded"}))
		return
	}
	switch {
	case g.cursor != nil:
		g.replayTape(w, r, api, body, id, g.cursor)
	case g.recorder != nil:
		g.recordTape(w, r, api, body, g.recorder)
	case g.team != nil && g.cfg.teamTape():
		g.serveTeamTape(w, r, api, body, id)
	default:
		g.serveMemory(w, r, api, body, id)
	}
}

// bodyError answers a request whose body could not be read, and logs it: 413 for a body over
// MaxRequestBody, else 400 (a malformed chunk, a body shorter than its Content-Length). A
// client that is gone never reads the answer; one that is still there learns what was wrong
// instead of getting an empty 200.
func (g *Gateway) bodyError(w http.ResponseWriter, r *http.Request, err error) {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		g.logf("request: %s %s from %s: the body is larger than %d bytes: answered 413", r.Method, r.URL.Path, r.RemoteAddr, MaxRequestBody)
		(&apiError{http.StatusRequestEntityTooLarge, "request_too_large", "body_too_large",
			fmt.Sprintf("agent-rewind gateway: the request body is larger than %d bytes: send a smaller request", MaxRequestBody)}).write(w, 0)
		return
	}
	g.logf("request: %s %s from %s: the body could not be read (Content-Length %d): %v: answered 400", r.Method, r.URL.Path, r.RemoteAddr, r.ContentLength, err)
	(&apiError{http.StatusBadRequest, "invalid_request_error", "body_unreadable",
		fmt.Sprintf("agent-rewind gateway: the request body could not be read: %v: send the whole body, as many bytes as Content-Length says, or well-formed chunks", err)}).write(w, 0)
}

// metadataCall reports whether a call only reads: GET, HEAD, or counting tokens (Anthropic's
// count_tokens, OpenAI's input_tokens).
func metadataCall(r *http.Request) bool {
	return r.Method == http.MethodGet || r.Method == http.MethodHead ||
		(r.Method == http.MethodPost && (r.URL.Path == "/v1/messages/count_tokens" || r.URL.Path == "/v1/responses/input_tokens"))
}

func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	rd := http.MaxBytesReader(w, r.Body, MaxRequestBody)
	if n := r.ContentLength; n > 0 && n <= MaxRequestBody {
		buf := make([]byte, n)
		if _, err := io.ReadFull(rd, buf); err != nil {
			return nil, err
		}
		// Nothing may follow the declared length; the server enforces that.
		return buf, nil
	}
	return io.ReadAll(rd)
}

// transform applies the configured body mechanisms (pruning, then cache preservation) and
// says what they did in response headers. Bodies they cannot read pass unchanged. Cache
// preservation places Anthropic breakpoints, so it applies to Messages calls alone: OpenAI
// caches a stable prefix by itself.
func (g *Gateway) transform(w http.ResponseWriter, api API, body []byte) []byte {
	if g.prune {
		if out, res, err := cacheplan.Prune(body, cacheplan.PruneOptions{Format: cacheplan.Format(api)}); err == nil {
			body = out
			w.Header().Set("X-Rewind-Pruned", strconv.Itoa(res.Pruned))
		}
	}
	if g.preserve && api == APIMessages {
		if out, plan, err := cacheplan.Preserve(body, cacheplan.Options{}); err == nil {
			body = out
			w.Header().Set("X-Rewind-Cache-Plan", string(plan.Decision))
		} else {
			w.Header().Set("X-Rewind-Cache-Plan", "invalid-json")
		}
	}
	return body
}

// withBody returns r carrying body (Content-Length fixed up) and the exchange state x.
func withBody(r *http.Request, body []byte, x *exchange) *http.Request {
	ctx := r.Context()
	if x != nil {
		ctx = context.WithValue(ctx, exchangeKey{}, x)
	}
	r2 := r.WithContext(ctx)
	r2.Body = io.NopCloser(bytes.NewReader(body))
	r2.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	r2.ContentLength = int64(len(body)) // the proxy's outgoing request takes its length from here
	return r2
}

// rewrite points the outgoing request at the upstream and strips the gateway's headers.
func (g *Gateway) rewrite(pr *httputil.ProxyRequest) {
	pr.SetURL(g.upstream)
	stripControlHeaders(pr.Out.Header)
	if apiOf(pr.In) != "" {
		// The gateway reads these responses (usage, completeness): ask for them as is.
		pr.Out.Header.Del("Accept-Encoding")
	}
}

// exchangeKey keys the per-request exchange state in a request's context.
type exchangeKey struct{}

// exchange is what the proxy hooks learn about one upstream exchange.
type exchange struct {
	capture bool // memory replay: tee the response body
	key     [32]byte
	api     API
	how     string // X-Rewind-Replay on the response

	status int
	header http.Header
	tee    *teeBody
	failed bool      // the upstream call failed; the error handler answered
	start  time.Time // when the call went upstream (for the latency histogram)
	// onComplete, when set, is called once with the whole body as soon as the upstream's
	// body has ended (within the capture limit), before the proxy writes its last bytes.
	onComplete func(body []byte)
}

func exchangeOf(r *http.Request) *exchange {
	x, _ := r.Context().Value(exchangeKey{}).(*exchange)
	return x
}

func (g *Gateway) modifyResponse(resp *http.Response) error {
	x := exchangeOf(resp.Request)
	if x == nil {
		return nil
	}
	if x.how != "" {
		resp.Header.Set(HeaderReplay, x.how)
	}
	x.status = resp.StatusCode
	x.header = resp.Header
	if !x.start.IsZero() {
		g.metrics.upstream.observe(time.Since(x.start))
	}
	if x.capture && resp.StatusCode == http.StatusOK {
		t := &teeBody{rc: resp.Body, limit: MaxMemoryRecord, onEOF: x.onComplete}
		if n := resp.ContentLength; n > 0 && n <= MaxMemoryRecord {
			t.buf = make([]byte, 0, n)
		}
		resp.Body = t
		x.tee = t
	}
	return nil
}

// proxyError answers a failed upstream call with 502 in the API's error shape, unless the
// client itself went away.
func (g *Gateway) proxyError(w http.ResponseWriter, r *http.Request, err error) {
	if x := exchangeOf(r); x != nil {
		x.failed = true
	}
	if r.Context().Err() != nil && errors.Is(context.Cause(r.Context()), context.Canceled) {
		return // the client disconnected: its upstream call was cancelled
	}
	msg := fmt.Sprintf("agent-rewind gateway: the upstream %s did not answer: %v", g.upstream, err)
	status := http.StatusBadGateway
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(r.Context().Err(), context.DeadlineExceeded) {
		status = http.StatusGatewayTimeout
	}
	(&apiError{status, "api_error", "upstream_unreachable", msg}).write(w, 0)
}

// teeBody keeps a copy of what the proxy reads of a response body, up to limit bytes.
type teeBody struct {
	rc    io.ReadCloser
	buf   []byte
	limit int
	over  bool
	eof   bool
	onEOF func([]byte) // called once at the end of a body kept whole
}

func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.rc.Read(p)
	if !t.over {
		if len(t.buf)+n > t.limit {
			t.over, t.buf = true, nil
		} else {
			t.buf = append(t.buf, p[:n]...)
		}
	}
	if err == io.EOF && !t.eof {
		t.eof = true
		if t.onEOF != nil && !t.over {
			t.onEOF(t.buf)
		}
	}
	return n, err
}

func (t *teeBody) Close() error { return t.rc.Close() }

// complete returns the whole body when it was read to its end within the limit.
func (t *teeBody) complete() ([]byte, bool) {
	if t == nil || t.over || !t.eof {
		return nil, false
	}
	return t.buf, true
}

// serveMemory answers a call from memory replay, or forwards it (one upstream call for
// identical requests in flight together) and records the response if it is complete. A call
// that must never be replayed (bypassReason) is forwarded and not recorded.
func (g *Gateway) serveMemory(w http.ResponseWriter, r *http.Request, api API, body []byte, id identity) {
	if why := bypassReason(api, body); why != "" {
		if !g.checkKey(w, r, id) {
			return
		}
		g.metrics.bypassed.Add(1)
		w.Header().Set(HeaderBypass, why)
		g.proxy.ServeHTTP(&firstByteWriter{ResponseWriter: w}, withBody(r, g.transform(w, api, body), &exchange{how: "bypass", start: time.Now()}))
		return
	}
	key := g.tenantReplayKey(r, keyBody(api, body), id.tenant, id.scope)
	if e, ok := g.mem.lookup(key); ok {
		if !g.checkKey(w, r, id) {
			return
		}
		g.replayed(e)
		e.serve(w, "hit")
		return
	}
	if g.team != nil {
		// The shared store answers before any paid call; if it cannot, nothing is paid.
		e, err := g.lookupShared(r.Context(), id, key)
		if err != nil {
			g.sharedError(w, err)
			return
		}
		if e != nil {
			g.replayed(e)
			e.serve(w, "hit")
			return
		}
	}
	// Identical requests in flight together share one upstream call. Do runs the function
	// in the first caller's goroutine, which streams the response to its own client while
	// the others wait for the finished record; a waiter whose client leaves waits on (its
	// goroutine is released when the leader's exchange ends).
	leader, aborted := false, false
	v, _, _ := g.flight.Do(string(key[:]), func() (any, error) {
		leader = true
		e, ab := g.forward(w, r, api, body, key, id.tenant)
		aborted = ab
		return e, nil
	})
	if leader {
		if aborted {
			panic(http.ErrAbortHandler) // the stream broke: abort the client's connection, as the proxy would
		}
		return
	}
	if r.Context().Err() != nil {
		return
	}
	if e, _ := v.(*entry); e != nil {
		g.replayed(e)
		e.serve(w, "coalesced")
		return
	}
	// The leader's response was not recorded (an error, a broken stream, too large): this
	// request gets its own upstream call.
	if _, ab := g.forward(w, r, api, body, key, id.tenant); ab {
		panic(http.ErrAbortHandler)
	}
}

// forward sends the request upstream through the reverse proxy, streaming the response to
// w, and records it in memory when it is complete and successful. aborted reports a stream
// that broke after the response had started.
func (g *Gateway) forward(w http.ResponseWriter, r *http.Request, api API, body []byte, key [32]byte, tenant string) (e *entry, aborted bool) {
	x := &exchange{capture: true, key: key, api: api, how: "miss", start: time.Now()}
	g.metrics.misses.Add(1)
	out := g.transform(w, api, body)
	var shared *sharedCommit
	if g.team != nil {
		// A team gateway stores a response before its client has all of it, so that no
		// replica pays again for a response a client has: the store starts the moment the
		// upstream's body ends, while the response is relayed, and the response's last byte
		// waits for its commit (sharedCommit).
		shared = g.newSharedCommit(w, r, x, tenant)
		w = shared.tail
		x.onComplete = shared.start
	}
	defer func() {
		if p := recover(); p != nil {
			if p != http.ErrAbortHandler {
				panic(p)
			}
			e, aborted = nil, true
		}
		if shared != nil {
			e = shared.finish(e)
		}
	}()
	g.proxy.ServeHTTP(&firstByteWriter{ResponseWriter: w}, withBody(r, out, x))
	if x.failed {
		return nil, false
	}
	b, ok := x.tee.complete()
	if !ok {
		return nil, false
	}
	if shared != nil {
		return shared.entry, false
	}
	// The response is whole: send it now and record it after (parsing its usage costs 8 µs
	// warm, about 90 µs after the process idled); meanwhile a request for the same key waits
	// for the record and is a hit (memoryStore.lookup).
	p := g.mem.begin(key)
	if p != nil {
		http.NewResponseController(w).Flush()
		defer func() { g.mem.finish(key, p, e) }()
	}
	if e = newEntry(key, api, x.status, x.header, b); e != nil && p == nil {
		g.mem.put(e)
	}
	return e, false
}

// replayed counts a call answered from memory on the savings receipt.
func (g *Gateway) replayed(e *entry) {
	g.metrics.replays.Add(1)
	if g.ledger != nil {
		g.ledger.add(e.model, e.usage)
	}
}

// firstByteWriter holds back a flush until the first byte of the body is written. The reverse
// proxy flushes a stream's headers at once, before any event; holding that flush back sends
// the headers with the first event in one write, so the client's first byte is not delayed by
// an extra packet. Every flush after it goes through. It keeps http.Flusher. The proxy calls
// Write and Flush under one lock, so wrote needs none of its own.
type firstByteWriter struct {
	http.ResponseWriter
	wrote bool
}

func (f *firstByteWriter) Write(p []byte) (int, error) {
	f.wrote = f.wrote || len(p) > 0
	return f.ResponseWriter.Write(p)
}

// Flush flushes once the body has begun.
func (f *firstByteWriter) Flush() {
	if f.wrote {
		http.NewResponseController(f.ResponseWriter).Flush()
	}
}

// Unwrap lets http.ResponseController reach the real writer.
func (f *firstByteWriter) Unwrap() http.ResponseWriter { return f.ResponseWriter }

// inMemoryBodies hands the transport a request body it knows is in memory. The reverse proxy
// wraps every outgoing body in a reader of its own, which makes the transport send the
// headers and the body in two writes (it flushes the headers first in case the body blocks);
// a body the gateway already read is sent fresh from GetBody instead, in one write with its
// headers, which spares the upstream a wake-up per request.
type inMemoryBodies struct{ rt http.RoundTripper }

func (t inMemoryBodies) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.GetBody != nil && req.ContentLength > 0 && exchangeOf(req) != nil {
		if body, err := req.GetBody(); err == nil {
			out := *req // RoundTrip must not change the caller's request
			out.Body = body
			return t.rt.RoundTrip(&out)
		}
	}
	return t.rt.RoundTrip(req)
}
