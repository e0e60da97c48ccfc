package gateway

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"slices"
	"sync"
	"syscall"
	"time"
)

// inlineTransport sends upstream calls over HTTP/1.1, plain or over TLS, in the calling
// goroutine: it writes the request and reads the response on a kept-alive connection itself.
// http.Transport hands each request to a writer goroutine and each response back from a reader
// goroutine; on a small machine each hand-off wakes another thread, and the one on the way back
// lies between the upstream's first byte and the client's. A call that goes through an
// environment proxy (HTTP_PROXY, HTTPS_PROXY), asks for an upgrade, or has a body that is not
// in memory goes to next, an http.Transport.
type inlineTransport struct {
	next       http.RoundTripper
	dial       func(ctx context.Context, network, addr string) (net.Conn, error)
	tlsConfig  *tls.Config // ALPN "http/1.1"; the system roots (SSL_CERT_FILE) unless set
	tlsTimeout time.Duration
	maxIdle    int
	idleTime   time.Duration
	maxHeader  int64 // the most bytes of response heads (1xx included) read for one call

	mu   sync.Mutex
	idle map[string][]*inlineConn // by scheme://host:port, most recently used last
}

// max1xx bounds the informational responses read before the final one, as http.Transport does.
const max1xx = 5

// newInlineTransport sends what it cannot carry to next, and takes from tr its dialer, TLS
// settings, timeouts and pool size.
func newInlineTransport(tr *http.Transport, next http.RoundTripper) *inlineTransport {
	tc := &tls.Config{}
	if tr.TLSClientConfig != nil {
		tc = tr.TLSClientConfig.Clone()
	}
	// HTTP/1.1 only: this transport speaks nothing else (Anthropic's own SDKs speak HTTP/1.1
	// to the API).
	tc.NextProtos = []string{"http/1.1"}
	maxHeader := tr.MaxResponseHeaderBytes
	if maxHeader <= 0 {
		maxHeader = 10 << 20 // http.Transport's default
	}
	return &inlineTransport{
		next: next, dial: tr.DialContext, tlsConfig: tc, tlsTimeout: tr.TLSHandshakeTimeout,
		maxIdle: tr.MaxIdleConnsPerHost, idleTime: tr.IdleConnTimeout, maxHeader: maxHeader,
		idle: map[string][]*inlineConn{},
	}
}

// inlineConn is one upstream connection.
type inlineConn struct {
	nc     net.Conn // a *tls.Conn for https
	br     *bufio.Reader
	bw     *bufio.Writer
	tls    *tls.ConnectionState
	read   int64 // bytes read in the current call (above TLS), to tell a connection closed while idle from a failed answer
	limit  int64 // bytes that may still be read in the current call
	idleAt time.Time
}

var errHeaderTooLarge = errors.New("the upstream's response head is too large")

func (c *inlineConn) Read(p []byte) (int, error) {
	if c.limit <= 0 {
		return 0, errHeaderTooLarge
	}
	if int64(len(p)) > c.limit {
		p = p[:c.limit]
	}
	n, err := c.nc.Read(p)
	c.read += int64(n)
	c.limit -= int64(n)
	return n, err
}

func (t *inlineTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.handles(req) {
		return t.next.RoundTrip(req)
	}
	host, port := req.URL.Hostname(), req.URL.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[req.URL.Scheme]
	}
	addr := net.JoinHostPort(host, port)
	key := req.URL.Scheme + "://" + addr
	for retried := false; ; retried = true {
		c, reused, err := t.conn(req.Context(), req.URL.Scheme, host, addr, key)
		if err != nil {
			return nil, ctxError(req.Context(), err)
		}
		resp, err := t.exchange(c, key, req)
		if err == nil {
			return resp, nil
		}
		c.nc.Close()
		// A kept-alive connection the upstream closed while it was idle fails before any byte
		// of an answer: send the call again on a new connection, once. The body is in memory
		// (handles), so the call can be sent again as it was.
		if !reused || retried || c.read > 0 || req.Context().Err() != nil || !closedConn(err) {
			return nil, ctxError(req.Context(), err)
		}
	}
}

// handles reports whether the call is one this transport sends itself: http or https, no
// environment proxy, no upgrade, and a body that can be sent again (none, or one in memory).
func (t *inlineTransport) handles(req *http.Request) bool {
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return false
	}
	if (req.Body != nil && req.Body != http.NoBody && req.GetBody == nil) || req.Header.Get("Upgrade") != "" {
		return false
	}
	p, err := http.ProxyFromEnvironment(req)
	return err == nil && p == nil
}

// conn returns an idle connection for key, or dials addr (with TLS for https).
func (t *inlineTransport) conn(ctx context.Context, scheme, host, addr, key string) (c *inlineConn, reused bool, err error) {
	t.mu.Lock()
	for cs := t.idle[key]; len(cs) > 0; cs = t.idle[key] {
		c = cs[len(cs)-1]
		t.idle[key] = cs[:len(cs)-1]
		if time.Since(c.idleAt) < t.idleTime {
			t.mu.Unlock()
			return c, true, nil
		}
		c.nc.Close()
	}
	t.mu.Unlock()
	nc, err := t.dial(ctx, "tcp", addr)
	if err != nil {
		return nil, false, err
	}
	c = &inlineConn{nc: nc}
	if scheme == "https" {
		if c.nc, c.tls, err = t.handshake(ctx, nc, host); err != nil {
			nc.Close()
			return nil, false, err
		}
	}
	c.bw = bufio.NewWriterSize(c.nc, 4<<10)
	c.br = bufio.NewReaderSize(c, 4<<10)
	return c, false, nil
}

// handshake makes nc a TLS connection to host, within the TLS handshake timeout.
func (t *inlineTransport) handshake(ctx context.Context, nc net.Conn, host string) (net.Conn, *tls.ConnectionState, error) {
	cfg := t.tlsConfig
	if cfg.ServerName == "" {
		cfg = cfg.Clone()
		cfg.ServerName = host
	}
	if t.tlsTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, t.tlsTimeout, fmt.Errorf("the TLS handshake with %s took longer than %s", host, t.tlsTimeout))
		defer cancel()
	}
	tc := tls.Client(nc, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
			return nil, nil, cause
		}
		return nil, nil, err
	}
	st := tc.ConnectionState()
	if p := st.NegotiatedProtocol; p != "" && p != "http/1.1" {
		return nil, nil, fmt.Errorf("the upstream %s chose the protocol %q over TLS: only http/1.1 was offered", host, p)
	}
	return tc, &st, nil
}

// put keeps c for the next call to key, or closes it when the pool is full. Connections idle
// longer than idleTime are closed here (the oldest are first: calls take the newest).
func (t *inlineTransport) put(key string, c *inlineConn) {
	c.idleAt = time.Now()
	var stale []*inlineConn
	t.mu.Lock()
	cs := t.idle[key]
	for len(cs) > 0 && c.idleAt.Sub(cs[0].idleAt) >= t.idleTime {
		stale, cs = append(stale, cs[0]), cs[1:]
	}
	if len(cs) < t.maxIdle {
		cs, c = append(cs, c), nil
	}
	t.idle[key] = cs
	t.mu.Unlock()
	for _, s := range stale {
		s.nc.Close()
	}
	if c != nil {
		c.nc.Close()
	}
}

// idleCount returns how many connections wait in the pool.
func (t *inlineTransport) idleCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, cs := range t.idle {
		n += len(cs)
	}
	return n
}

// CloseIdleConnections closes the idle connections, its own and next's.
func (t *inlineTransport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = map[string][]*inlineConn{}
	t.mu.Unlock()
	for _, cs := range idle {
		for _, c := range cs {
			c.nc.Close()
		}
	}
	if ci, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}

// exchange writes req on c and reads the response head; the body reads from c and gives the
// connection back at its end.
func (t *inlineTransport) exchange(c *inlineConn, key string, req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	// Cancelling the call unblocks whatever waits on the connection; the connection is then
	// not reused.
	stop := context.AfterFunc(ctx, func() { c.nc.SetDeadline(time.Unix(1, 0)) })
	c.read, c.limit = 0, t.maxHeader
	resp, err := t.send(c, req)
	if err != nil {
		stop()
		return nil, err
	}
	c.limit = math.MaxInt64
	resp.TLS = c.tls
	chunked := len(resp.TransferEncoding) > 0 && resp.TransferEncoding[0] == "chunked"
	// A body without a length ends when the upstream closes: the connection is not reused.
	keep := !resp.Close && !req.Close && (resp.ContentLength >= 0 || chunked || resp.Body == http.NoBody)
	resp.Body = &inlineBody{rc: resp.Body, ctx: ctx, done: func(whole bool) {
		if stop() && whole && keep && c.br.Buffered() == 0 {
			t.put(key, c)
			return
		}
		c.nc.Close()
	}}
	return resp, nil
}

// send writes req on c and reads the final response's head, passing informational (1xx)
// responses to the call's trace (the reverse proxy forwards them to its client). An upstream
// may answer before it has read the whole request (an error for a large body) and close:
// when writing fails, the answer it may have sent is still read.
func (t *inlineTransport) send(c *inlineConn, req *http.Request) (*http.Response, error) {
	out := *req
	out.Body = nil // no body: "Content-Length: 0" for a POST, as http.Transport sends it
	if req.Body != nil && req.Body != http.NoBody && req.ContentLength != 0 {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		out.Body = body
	}
	werr := out.Write(c.bw)
	if werr == nil {
		werr = c.bw.Flush()
	}
	trace := httptrace.ContextClientTrace(req.Context())
	if werr == nil && trace != nil && trace.WroteRequest != nil {
		trace.WroteRequest(httptrace.WroteRequestInfo{})
	}
	for n1xx := 0; ; n1xx++ {
		resp, err := http.ReadResponse(c.br, req)
		if err != nil {
			if werr != nil {
				return nil, werr // no answer came: the write's error says why
			}
			return nil, err
		}
		if werr != nil {
			resp.Close = true // the request was not sent whole: the connection is spent
		}
		code := resp.StatusCode
		if code == http.StatusSwitchingProtocols {
			return nil, fmt.Errorf("the upstream switched protocols (101) on a call that asked for no upgrade")
		}
		if code >= 200 || code < 100 {
			return resp, nil
		}
		if n1xx == max1xx {
			return nil, fmt.Errorf("the upstream sent more than %d informational (1xx) responses", max1xx)
		}
		if trace != nil && trace.Got1xxResponse != nil {
			if err := trace.Got1xxResponse(code, textproto.MIMEHeader(resp.Header)); err != nil {
				return nil, err
			}
		}
	}
}

// inlineBody is a response body on an inlineConn; done runs once, at its end (whole) or when
// it is closed before it.
type inlineBody struct {
	rc   io.ReadCloser
	ctx  context.Context
	done func(whole bool)
	over bool
}

func (b *inlineBody) Read(p []byte) (int, error) {
	if b.over {
		return 0, io.EOF
	}
	n, err := b.rc.Read(p)
	switch {
	case err == io.EOF:
		b.finish(true)
	case err != nil:
		b.finish(false)
		err = ctxError(b.ctx, err)
	}
	return n, err
}

func (b *inlineBody) Close() error {
	b.finish(false)
	return nil
}

func (b *inlineBody) finish(whole bool) {
	if !b.over {
		b.over = true
		b.rc.Close()
		b.done(whole)
	}
}

// ctxError is err, or the call's own end (context.Canceled when the client left) when it
// caused err: a cancelled call must not read as an upstream failure.
func ctxError(ctx context.Context, err error) error {
	if ctx.Err() == nil {
		return err
	}
	if cause := context.Cause(ctx); cause != ctx.Err() {
		return fmt.Errorf("%w: %w", ctx.Err(), cause)
	}
	return ctx.Err()
}

// closedConn reports whether err is what a connection the peer had closed gives.
func closedConn(err error) bool {
	return slices.ContainsFunc([]error{io.EOF, io.ErrUnexpectedEOF, syscall.ECONNRESET, syscall.EPIPE}, func(e error) bool { return errors.Is(err, e) })
}
