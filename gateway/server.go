package gateway

import (
	"context"
	"errors"
	"log"
	"net"
	"net/http"
	"time"
)

// Server timeouts. There is no write timeout: a model's answer may stream for many minutes.
const (
	// ReadHeaderTimeout bounds how long a client may take to send a request's headers.
	ReadHeaderTimeout = 10 * time.Second
	// IdleTimeout closes keep-alive connections idle this long.
	IdleTimeout = 2 * time.Minute
	// ShutdownGrace is how long Serve lets requests in progress finish after ctx ends.
	ShutdownGrace = 5 * time.Second
)

// Serve serves the gateway on ln until ctx ends, then stops accepting connections, lets the
// requests in progress finish for up to Config.DrainTimeout (ShutdownGrace by default), and
// returns. With a TLS certificate configured it serves HTTPS. It does not Close the
// gateway.
func (g *Gateway) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           g,
		ReadHeaderTimeout: ReadHeaderTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    1 << 20,
		ErrorLog:          log.New(logWriter{g}, "", 0),
	}
	errc := make(chan error, 1)
	if g.tlsConfig != nil {
		srv.TLSConfig = g.tlsConfig.Clone()
		go func() { errc <- srv.ServeTLS(ln, "", "") }()
	} else {
		go func() { errc <- srv.Serve(ln) }()
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Drain: /readyz turns 503 so a load balancer sends new requests elsewhere; requests in
	// progress, streams included, finish within the grace period.
	g.draining.Store(true)
	grace := g.cfg.DrainTimeout
	if grace <= 0 {
		grace = ShutdownGrace
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// logWriter sends the HTTP server's own log lines to the gateway's log.
type logWriter struct{ g *Gateway }

func (l logWriter) Write(p []byte) (int, error) {
	l.g.logf("http: %s", trimNewline(p))
	return len(p), nil
}

func trimNewline(p []byte) string {
	for len(p) > 0 && (p[len(p)-1] == '\n' || p[len(p)-1] == '\r') {
		p = p[:len(p)-1]
	}
	return string(p)
}
