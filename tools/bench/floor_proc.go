package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
)

// The floors of the gateway's added time, each a child process between the client and the mock
// upstream like the gateway: what any proxy process adds on this machine, measured in the same
// run. "bench proxy" is the least a Go HTTP reverse proxy does (httputil.ReverseProxy with its
// defaults and nothing else); "bench relay" copies bytes between two TCP connections, without
// reading HTTP at all. Their difference to the direct call is the cost of a process in the path
// (its wake-ups, on a machine whose idle CPUs sleep); the gateway's difference to "bench proxy"
// is what its own work adds.

// proxyMain is "bench proxy --upstream URL": httputil.ReverseProxy to URL on a free loopback port.
func proxyMain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	u, ok := upstreamFlag("bench proxy", args, stderr)
	if !ok {
		return 2
	}
	p := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(u) }}
	return serveChild("bench proxy", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The request body is read first, as the gateway reads it: streamed through, about one
		// stream in twenty broke off (the proxy's upstream connection closed under its read).
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		p.ServeHTTP(w, r)
	}), stdin, stdout, stderr)
}

// relayMain is "bench relay --upstream URL": each connection accepted on a free loopback port is
// joined to a new connection to URL's host, bytes copied both ways.
func relayMain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	u, ok := upstreamFlag("bench relay", args, stderr)
	if !ok {
		return 2
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintf(stderr, "bench relay: %v\n", err)
		return 1
	}
	go func() {
		io.Copy(io.Discard, stdin)
		ln.Close()
	}()
	fmt.Fprintf(stdout, "http://%s\n", ln.Addr())
	for {
		c, err := ln.Accept()
		if err != nil {
			return 0 // closed: stdin ended
		}
		go relay(c, u.Host)
	}
}

// relay joins c to a new connection to addr until either side closes.
func relay(c net.Conn, addr string) {
	defer c.Close()
	up, err := net.Dial("tcp", addr)
	if err != nil {
		return
	}
	defer up.Close()
	go func() {
		io.Copy(up, c)
		up.(*net.TCPConn).CloseWrite()
	}()
	io.Copy(c, up)
}

// upstreamFlag parses a floor's one flag, --upstream URL; false (after saying why on stderr) when
// it is missing or not a base URL.
func upstreamFlag(cmd string, args []string, stderr io.Writer) (*url.URL, bool) {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	upstream := fs.String("upstream", "", "the upstream's base URL")
	if err := fs.Parse(args); err != nil {
		return nil, false
	}
	u, err := url.Parse(*upstream)
	if err != nil || u.Host == "" {
		fmt.Fprintf(stderr, "%s: --upstream %q: give the upstream's base URL, http://HOST:PORT\n", cmd, *upstream)
		return nil, false
	}
	return u, true
}
