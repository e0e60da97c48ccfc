package gateway

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	neturl "net/url"
	"sync/atomic"
	"testing"
)

// pgRoundTrips is a loopback proxy in front of PostgreSQL that counts the round trips its
// clients make: the messages after which the server answers, Sync (the extended protocol's, one
// per statement or pipelined batch) and Query (the simple protocol's: pgx's BEGIN, COMMIT and
// pings).
type pgRoundTrips struct {
	url   string // the database's connection string, through the proxy
	trips atomic.Int64
}

func newPGRoundTrips(t *testing.T, dbURL string) *pgRoundTrips {
	t.Helper()
	u, err := neturl.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	p := &pgRoundTrips{}
	server := u.Host
	u.Host = ln.Addr().String()
	p.url = u.String()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", server)
			if err != nil {
				c.Close()
				continue
			}
			t.Cleanup(func() { c.Close(); s.Close() })
			go func() { io.Copy(c, s); c.Close() }()
			go func() { p.forward(s, c); s.Close() }()
		}
	}()
	return p
}

// forward copies a client's messages to the server, counting round trips before it passes
// them on (so the count is up to date when the answer comes): a startup message first (no type
// byte), then typed messages.
func (p *pgRoundTrips) forward(server io.Writer, client io.Reader) {
	r := bufio.NewReader(client)
	var hdr [5]byte
	copyMsg := func(h []byte) bool {
		if _, err := io.ReadFull(r, h); err != nil {
			return false
		}
		if len(h) == 5 && (h[0] == 'S' || h[0] == 'Q') {
			p.trips.Add(1)
		}
		n := int64(binary.BigEndian.Uint32(h[len(h)-4:])) - 4
		if _, err := server.Write(h); err != nil {
			return false
		}
		_, err := io.CopyN(server, r, n)
		return err == nil
	}
	if !copyMsg(hdr[1:]) {
		return
	}
	for copyMsg(hdr[:]) {
	}
}

func (p *pgRoundTrips) n() int64 { return p.trips.Load() }
