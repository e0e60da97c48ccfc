package gateway

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/textproto"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/tools/mockanthropic"
)

// upstreamSchemes are the upstreams the gateway is tested against: plain HTTP (a mock, a local
// model server) and HTTPS (the provider).
var upstreamSchemes = []string{"http", "https"}

// testUpstream is an upstream server for the gateway under test.
type testUpstream struct {
	URL   string
	cert  *x509.Certificate // its certificate; nil for plain HTTP
	roots *x509.CertPool    // what trusts it
}

// serveUpstream serves h over scheme ("http" or "https") on a loopback port until the test
// ends; state, when set, sees every connection state change.
func serveUpstream(t *testing.T, scheme string, h http.HandlerFunc, state func(net.Conn, http.ConnState)) testUpstream {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = state
	if scheme == "https" {
		srv.EnableHTTP2 = true // the gateway must choose HTTP/1.1 all the same
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	u := testUpstream{URL: srv.URL}
	if scheme == "https" {
		u.cert = srv.Certificate()
		u.roots = x509.NewCertPool()
		u.roots.AddCert(u.cert)
	}
	return u
}

// startGatewayTo starts a default gateway in front of up, trusting its certificate as the
// system roots would trust a real provider's.
func startGatewayTo(t *testing.T, up testUpstream) (*Gateway, string) {
	t.Helper()
	cfg, _ := testConfig(t, up.URL)
	g, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if up.roots != nil {
		tr, ok := g.proxy.Transport.(inMemoryBodies).rt.(*http.Transport)
		if !ok {
			t.Fatalf("the default upstream transport is a %T", g.proxy.Transport)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: up.roots}
	}
	url, stop := serve(t, g)
	t.Cleanup(func() {
		stop()
		if err := g.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return g, url
}

// rawPost writes a Messages call on a new connection to the gateway and returns the
// connection and the response head; the test reads the body.
func rawPost(t *testing.T, gw, body string, extra ...string) (net.Conn, *http.Response) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(gw, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(time.Minute)) // a gateway that held the answer fails here, not hangs
	fmt.Fprintf(conn, "POST /v1/messages HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nAnthropic-Version: 2023-06-01\r\nX-Api-Key: %s\r\n%sContent-Length: %d\r\n\r\n%s", key1, strings.Join(extra, ""), len(body), body)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no response head: %v", err)
	}
	return conn, resp
}

// TestStreamFirstEventNotHeld: the first event of a stream reaches the client while the
// upstream still holds the second, over HTTP and HTTPS; the gateway speaks HTTP/1.1 to an
// upstream that also offers HTTP/2.
func TestStreamFirstEventNotHeld(t *testing.T) {
	for _, scheme := range upstreamSchemes {
		t.Run(scheme, func(t *testing.T) {
			release := make(chan struct{})
			var proto atomic.Value
			up := serveUpstream(t, scheme, func(w http.ResponseWriter, r *http.Request) {
				proto.Store(r.Proto)
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\"}\n\n")
				w.(http.Flusher).Flush()
				select {
				case <-release:
				case <-r.Context().Done():
					return
				}
				io.WriteString(w, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
			}, nil)
			_, gw := startGatewayTo(t, up)

			// A raw client, so that the only http.Transport in this process would be the gateway's.
			_, resp := rawPost(t, gw, messagesBody("first event", true))
			events := bufio.NewReader(resp.Body)
			line, err := events.ReadString('\n')
			if err != nil || line != "event: message_start\n" {
				t.Fatalf("first line %q, %v: want the first event while the upstream holds the second", line, err)
			}
			close(release)
			rest, err := io.ReadAll(events)
			if err != nil || !strings.Contains(string(rest), "event: message_stop\n") {
				t.Errorf("the rest of the stream: %q, %v", rest, err)
			}
			if p, _ := proto.Load().(string); p != "HTTP/1.1" {
				t.Errorf("the upstream was called over %s, want HTTP/1.1", p)
			}
		})
	}
}

// TestHTTPSUpstreamEndToEnd: the mock Anthropic API served over HTTPS, through the gateway:
// a JSON answer and an SSE stream arrive exactly as the upstream sent them, a repeated call is
// replayed, and successive calls share one TLS connection.
func TestHTTPSUpstreamEndToEnd(t *testing.T) {
	mock := mockanthropic.New(mockanthropic.Options{})
	var conns atomic.Int64
	up := serveUpstream(t, "https", mock.Handler().ServeHTTP, func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	})
	_, gw := startGatewayTo(t, up)
	direct := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: up.roots}}}
	for _, stream := range []bool{false, true} {
		body := messagesBody(fmt.Sprint("over TLS, stream ", stream), stream)
		got := post(t, gw, "/v1/messages", body, "x-api-key", key1)
		if got.status != 200 || got.header.Get(HeaderReplay) != "miss" {
			t.Fatalf("stream %v: status %d, %s %q: %s", stream, got.status, HeaderReplay, got.header.Get(HeaderReplay), got.body)
		}
		req, _ := http.NewRequest(http.MethodPost, up.URL+"/v1/messages", strings.NewReader(body))
		req.Header.Set("x-api-key", key1)
		req.Header.Set("anthropic-version", "2023-06-01")
		resp, err := direct.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !bytes.Equal(got.body, want) {
			t.Errorf("stream %v: through the gateway\n%s\nwant, as the upstream answers directly,\n%s", stream, got.body, want)
		}
		if stream && !strings.Contains(string(got.body), "event: message_stop") {
			t.Errorf("the stream ended without message_stop: %s", got.body)
		}
		again := post(t, gw, "/v1/messages", body, "x-api-key", key1)
		if again.header.Get(HeaderReplay) != "hit" || !bytes.Equal(again.body, got.body) {
			t.Errorf("stream %v: the repeated call: %s %q, body equal %v; want a replay hit of the same bytes", stream, HeaderReplay, again.header.Get(HeaderReplay), bytes.Equal(again.body, got.body))
		}
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("the upstream saw %d connections, want 2 (the gateway's one, kept alive, and the direct client's)", n)
	}
}

// TestHTTPSUpstreamUntrusted: an HTTPS upstream whose certificate no root vouches for is
// refused: 502 naming the certificate, and nothing sent.
func TestHTTPSUpstreamUntrusted(t *testing.T) {
	var calls atomic.Int64
	up := serveUpstream(t, "https", func(w http.ResponseWriter, r *http.Request) { calls.Add(1) }, nil)
	up.roots = x509.NewCertPool() // trusts nothing
	_, gw := startGatewayTo(t, up)
	got := post(t, gw, "/v1/messages", messagesBody("untrusted", false), "x-api-key", key1)
	if got.status != http.StatusBadGateway || !strings.Contains(string(got.body), "certificate") {
		t.Errorf("status %d: %s; want 502 naming the certificate", got.status, got.body)
	}
	if calls.Load() != 0 {
		t.Error("the call reached an upstream whose certificate is not trusted")
	}
}

// TestUpstreamConnectionReused: successive calls share one kept-alive upstream connection,
// plain and over TLS.
func TestUpstreamConnectionReused(t *testing.T) {
	for _, scheme := range upstreamSchemes {
		t.Run(scheme, func(t *testing.T) {
			var conns atomic.Int64
			up := serveUpstream(t, scheme, func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"type":"message","model":"claude-sonnet-5-5","content":[],"usage":{"input_tokens":1,"output_tokens":1}}`)
			}, func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					conns.Add(1)
				}
			})
			_, gw := startGatewayTo(t, up)
			for i := range 3 {
				if r := post(t, gw, "/v1/messages", messagesBody(fmt.Sprint("reuse ", i), false), "x-api-key", key1); r.status != 200 {
					t.Fatalf("call %d: status %d: %s", i, r.status, r.body)
				}
			}
			if n := conns.Load(); n != 1 {
				t.Errorf("three successive calls opened %d upstream connections, want 1", n)
			}
		})
	}
}

// hijack takes the connection of an upstream handler, to answer in ways net/http's server
// would not.
func hijack(t *testing.T, w http.ResponseWriter) (net.Conn, *bufio.ReadWriter) {
	c, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		t.Error(err)
	}
	return c, rw
}

// TestUpstreamEmptyBody: a call with an empty body reaches the upstream with
// "Content-Length: 0", not as a chunked body.
func TestUpstreamEmptyBody(t *testing.T) {
	got := make(chan string, 1)
	up := serveUpstream(t, "http", func(w http.ResponseWriter, r *http.Request) {
		got <- fmt.Sprintf("length %q, transfer encoding %q", r.Header.Get("Content-Length"), r.TransferEncoding)
		http.Error(w, `{"type":"error"}`, http.StatusBadRequest)
	}, nil)
	_, gw := startGatewayTo(t, up)
	post(t, gw, "/v1/messages", "", "x-api-key", key1)
	if g, want := <-got, `length "0", transfer encoding []`; g != want {
		t.Errorf("the upstream saw %s, want %s", g, want)
	}
}

// TestUpstreamEarlyAnswer: an upstream that answers before reading the whole request
// (an error for a large body) and closes: the client gets that answer, not a 502.
func TestUpstreamEarlyAnswer(t *testing.T) {
	up := serveUpstream(t, "http", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		io.WriteString(w, `{"type":"error","error":{"type":"request_too_large","message":"early"}}`)
	}, nil)
	_, gw := startGatewayTo(t, up)
	big := messagesBody(strings.Repeat("x", 8<<20), false)
	r := post(t, gw, "/v1/messages", big, "x-api-key", key1)
	if r.status != http.StatusRequestEntityTooLarge || !strings.Contains(string(r.body), "early") {
		t.Errorf("status %d: %.300s; want the upstream's own 413", r.status, r.body)
	}
}

// TestUpstreamInformational: 1xx answers before the final one reach the client (103
// Early Hints), and a client that asked "Expect: 100-continue" gets its answer.
func TestUpstreamInformational(t *testing.T) {
	up := serveUpstream(t, "http", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Link", "</hint>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Del("Link")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"type":"message","content":[],"usage":{"input_tokens":1,"output_tokens":1}}`)
	}, nil)
	_, gw := startGatewayTo(t, up)
	var hints []string
	trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
		hints = append(hints, fmt.Sprint(code, " ", h.Get("Link")))
		return nil
	}}
	req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodPost, gw+"/v1/messages", strings.NewReader(messagesBody("hints", false)))
	req.Header.Set("x-api-key", key1)
	req.Header.Set("anthropic-version", "2023-06-01")
	req.Header.Set("Expect", "100-continue")
	resp, err := testClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"type":"message"`) {
		t.Errorf("status %d: %s", resp.StatusCode, body)
	}
	if !strings.Contains(strings.Join(hints, "|"), "103 </hint>; rel=preload") {
		t.Errorf("the client saw the informational answers %q; want 103 with its Link", hints)
	}
}

// TestUpstreamBodyToClose: an answer without Content-Length or chunking runs until the
// upstream closes: the client gets all of it, and the next call has a new connection.
func TestUpstreamBodyToClose(t *testing.T) {
	var conns atomic.Int64
	const answer = `{"type":"message","content":[{"type":"text","text":"to the close"}],"usage":{"input_tokens":1,"output_tokens":1}}`
	up := serveUpstream(t, "http", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		c, rw := hijack(t, w)
		rw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n" + answer)
		rw.Flush()
		c.Close()
	}, func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	})
	_, gw := startGatewayTo(t, up)
	for i := range 2 {
		r := post(t, gw, "/v1/messages", messagesBody(fmt.Sprint("to close ", i), false), "x-api-key", key1)
		if r.status != 200 || string(r.body) != answer {
			t.Fatalf("call %d: status %d: %q; want %q", i, r.status, r.body, answer)
		}
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("%d upstream connections for two calls, want 2", n)
	}
}

// TestUpstreamHEAD: a HEAD call passes through (headers, no body) and its connection
// is kept for the next call.
func TestUpstreamHEAD(t *testing.T) {
	var conns atomic.Int64
	up := serveUpstream(t, "http", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", "123")
		w.Header().Set("X-Method", r.Method)
		if r.Method != http.MethodHead {
			io.WriteString(w, strings.Repeat(" ", 123))
		}
	}, func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	})
	_, gw := startGatewayTo(t, up)
	for i := range 2 {
		req, _ := http.NewRequest(http.MethodHead, gw+"/v1/models", nil)
		req.Header.Set("x-api-key", key1)
		resp, err := testClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("X-Method") != "HEAD" || resp.ContentLength != 123 {
			t.Errorf("HEAD %d: status %d, method %q, length %d", i, resp.StatusCode, resp.Header.Get("X-Method"), resp.ContentLength)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d upstream connections for two HEAD calls, want 1 (kept alive)", n)
	}
}

// TestUpstreamCancelMidStream: a client that leaves in the middle of a stream ends the
// upstream call: the upstream sees its connection close.
func TestUpstreamCancelMidStream(t *testing.T) {
	upstreamGone := make(chan struct{})
	up := serveUpstream(t, "http", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\"}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the gateway's connection closed
		close(upstreamGone)
	}, nil)
	_, gw := startGatewayTo(t, up)
	conn, resp := rawPost(t, gw, messagesBody("leave mid-stream", true))
	if line, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil || line != "event: message_start\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	conn.Close()
	select {
	case <-upstreamGone:
	case <-time.After(time.Minute):
		t.Fatal("the upstream's connection stayed open after the client left")
	}
}

// TestUpstreamConcurrent: many calls at once, streamed and not, each gets its own
// answer whole (run with -race).
func TestUpstreamConcurrent(t *testing.T) {
	for _, scheme := range upstreamSchemes {
		t.Run(scheme, func(t *testing.T) {
			up := serveUpstream(t, scheme, func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				if bytes.Contains(b, []byte(`"stream":true`)) {
					w.Header().Set("Content-Type", "text/event-stream")
					for i := range 3 {
						fmt.Fprintf(w, "event: e%d\ndata: %d\n\n", i, len(b))
						w.(http.Flusher).Flush()
					}
					io.WriteString(w, "event: message_stop\ndata: {}\n\n")
					return
				}
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"type":"message","content":[],"echo":%d,"usage":{"input_tokens":1,"output_tokens":1}}`, len(b))
			}, nil)
			_, gw := startGatewayTo(t, up)
			var wg sync.WaitGroup
			for w := range 8 {
				wg.Go(func() {
					for i := range 12 {
						stream := i%2 == 1
						body := messagesBody(fmt.Sprintf("worker %d call %d %s", w, i, strings.Repeat("y", w*100)), stream)
						r := post(t, gw, "/v1/messages", body, "x-api-key", key1)
						want := fmt.Sprintf(`"echo":%d`, len(body))
						if stream {
							want = fmt.Sprintf("event: e2\ndata: %d\n\nevent: message_stop", len(body))
						}
						if r.status != 200 || !strings.Contains(string(r.body), want) {
							t.Errorf("worker %d call %d: status %d: %s; want %q", w, i, r.status, r.body, want)
						}
					}
				})
			}
			wg.Wait()
		})
	}
}

// TestHTTPSUpstreamTrustsSSLCertFile: the gateway trusts the roots SSL_CERT_FILE names, as
// Go's system roots do (read once per process: the calls run in a child process of this test
// binary), and refuses the same upstream without them.
func TestHTTPSUpstreamTrustsSSLCertFile(t *testing.T) {
	if up := os.Getenv("GATEWAY_TEST_SSL_UPSTREAM"); up != "" {
		cfg, _ := testConfig(t, up)
		_, gw := startGateway(t, cfg)
		got := post(t, gw, "/v1/messages", messagesBody("trusted by file", false), "x-api-key", key1)
		if want := os.Getenv("GATEWAY_TEST_SSL_WANT"); fmt.Sprint(got.status) != want {
			t.Fatalf("status %d, want %s: %s", got.status, want, got.body)
		}
		return
	}
	up := serveUpstream(t, "https", startMock(t, mockanthropic.Options{}).Handler().ServeHTTP, nil)
	certFile := filepath.Join(t.TempDir(), "upstream.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: up.cert.Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		env  []string
		want int
	}{
		{[]string{"SSL_CERT_FILE=" + certFile, "SSL_CERT_DIR=" + t.TempDir()}, http.StatusOK},
		{[]string{"SSL_CERT_FILE=" + filepath.Join(t.TempDir(), "none.pem"), "SSL_CERT_DIR=" + t.TempDir()}, http.StatusBadGateway},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHTTPSUpstreamTrustsSSLCertFile$", "-test.count=1")
		cmd.Env = append(os.Environ(), append(c.env, "GATEWAY_TEST_SSL_UPSTREAM="+up.URL, fmt.Sprint("GATEWAY_TEST_SSL_WANT=", c.want))...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("with %s: %v\n%s", c.env[0], err, out)
		}
	}
}
