package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/agent-rewind/rewind/tools/mockanthropic"
)

// The gateway suites' mock upstream runs in a child process of its own ("bench mock"), as a
// real upstream does: in another process than its client. Served from the bench's own process,
// a direct call never left that process's scheduler (the client's thread wrote the request and
// found the mock's goroutine ready on its next poll, waking nothing), while a call through the
// gateway paid, besides the gateway's own two hops, the upstream's two wake-ups of the bench
// process: the direct arm skipped a cost that every real upstream has, and the gateway's
// added time was charged with it.

// headerArrived is the response header in which the child mock says when it had the whole
// request (Unix nanoseconds; one clock for all processes of the machine): it splits a first
// byte's time into the part before the upstream has the request and the part after.
const headerArrived = "X-Bench-Mock-Arrived"

// childProc is a running child of this executable ("bench mock", "bench proxy", "bench
// relay"): a server that printed its URL on one line and serves until its stdin ends.
type childProc struct {
	URL   string
	cmd   *exec.Cmd
	stdin io.Closer
	done  chan error
}

// mockProc is a running "bench mock" child.
type mockProc struct{ *childProc }

// startMock starts "bench mock" (this executable) with the given event delay and waits for the
// URL it listens on.
func startMock(ctx context.Context, eventDelay time.Duration) (*mockProc, error) {
	c, err := startChild(ctx, "mock", "--event-delay", eventDelay.String())
	if err != nil {
		return nil, err
	}
	return &mockProc{c}, nil
}

// startChild starts this executable with args and waits for the URL it prints.
func startChild(ctx context.Context, args ...string) (*childProc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find the bench executable (for its %s subcommand): %w", args[0], err)
	}
	cmd := exec.CommandContext(context.WithoutCancel(ctx), self, args...)
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe() // the child exits when it reads EOF: when we close it, or die
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !(strings.HasPrefix(line, "http://") || strings.HasPrefix(line, "https://")) {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("bench %v did not say where it listens (%q, %v): %s", args, line, err, tail(stderr.String(), 600))
	}
	c := &childProc{URL: strings.TrimSpace(line), cmd: cmd, stdin: stdin, done: make(chan error, 1)}
	go func() { c.done <- cmd.Wait() }()
	return c, nil
}

// Hits returns how many Messages calls the mock answered (mockanthropic.Server.Hits).
func (m *mockProc) Hits(ctx context.Context) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.URL+"/bench/hits", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("ask the mock upstream for its hits: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}

// stop ends the child: closing its stdin, then SIGKILL after 10 s.
func (c *childProc) stop() {
	c.stdin.Close()
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		c.cmd.Process.Kill()
		<-c.done
	}
}

// startTLSMock starts "bench mock" serving HTTPS with the certificate and key in cert's files.
func startTLSMock(ctx context.Context, eventDelay time.Duration, cert *throwawayCert) (*mockProc, error) {
	c, err := startChild(ctx, "mock", "--event-delay", eventDelay.String(), "--tls-cert", cert.CertFile, "--tls-key", cert.KeyFile)
	if err != nil {
		return nil, err
	}
	return &mockProc{c}, nil
}

// mockMain is "bench mock [--event-delay D] [--tls-cert F --tls-key F]": the mock upstream on a
// free loopback port (over HTTPS when given a certificate and its key), whose URL it prints on
// one line; it serves until its stdin ends. GET /bench/hits answers the number of model calls answered (all three APIs); every
// response carries headerArrived.
func mockMain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench mock", flag.ContinueOnError)
	fs.SetOutput(stderr)
	delay := fs.Duration("event-delay", 0, "the pause before each streamed event after the first")
	cert := fs.String("tls-cert", "", "serve HTTPS with this PEM certificate")
	key := fs.String("tls-key", "", "and this PEM private key")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if (*cert == "") != (*key == "") {
		fmt.Fprintf(stderr, "bench mock: --tls-cert %q and --tls-key %q: give both, or neither\n", *cert, *key)
		return 2
	}
	mock := mockanthropic.New(mockanthropic.Options{EventDelay: *delay, OnRequest: func(r *http.Request, _ []byte) {
		if at, ok := r.Context().Value(arrivedKey{}).(*int64); ok {
			*at = time.Now().UnixNano()
		}
	}})
	h := mock.Handler()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /bench/hits", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, mock.Hits())
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		var at int64
		h.ServeHTTP(&arrivedWriter{ResponseWriter: w, at: &at}, r.WithContext(context.WithValue(r.Context(), arrivedKey{}, &at)))
	})
	return serveChildTLS("bench mock", mux, *cert, *key, stdin, stdout, stderr)
}

// serveChild serves h on a free loopback port, prints its URL, and returns when stdin ends.
func serveChild(name string, h http.Handler, stdin io.Reader, stdout, stderr io.Writer) int {
	return serveChildTLS(name, h, "", "", stdin, stdout, stderr)
}

// serveChildTLS is serveChild over HTTPS with the certificate and key files, when given.
func serveChildTLS(name string, h http.Handler, cert, key string, stdin io.Reader, stdout, stderr io.Writer) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		io.Copy(io.Discard, stdin)
		srv.Close()
	}()
	serve, scheme := srv.Serve, "http"
	if cert != "" {
		serve, scheme = func(ln net.Listener) error { return srv.ServeTLS(ln, cert, key) }, "https"
	}
	fmt.Fprintf(stdout, "%s://%s\n", scheme, ln.Addr())
	if err := serve(ln); !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	return 0
}

// arrivedKey keys the request's arrival time in its context.
type arrivedKey struct{}

// arrivedWriter adds headerArrived to the response once the mock has the whole request.
type arrivedWriter struct {
	http.ResponseWriter
	at *int64
}

func (a *arrivedWriter) WriteHeader(code int) {
	if *a.at != 0 {
		a.Header().Set(headerArrived, strconv.FormatInt(*a.at, 10))
	}
	a.ResponseWriter.WriteHeader(code)
}

func (a *arrivedWriter) Flush() { http.NewResponseController(a.ResponseWriter).Flush() }

func (a *arrivedWriter) Unwrap() http.ResponseWriter { return a.ResponseWriter }

// arrived returns when the child mock had the request, from a response's header; zero if not said.
func arrived(h http.Header) time.Time {
	ns, err := strconv.ParseInt(h.Get(headerArrived), 10, 64)
	if err != nil || ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}
