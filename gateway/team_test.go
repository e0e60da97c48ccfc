package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/tape/pgtape"
	"github.com/agent-rewind/rewind/tape/pgtape/pgtest"
	"github.com/agent-rewind/rewind/tools/mockanthropic"
)

var teamDeploymentKey = []byte("0123456789abcdef0123456789abcdef")

// teamDB creates a migrated database and returns its connection string and a store on it
// (for creating keys).
func teamDB(t *testing.T) (string, *pgtape.Store) {
	t.Helper()
	url := pgtest.Database(t)
	s, err := pgtape.Open(context.Background(), pgtape.Options{URL: url, DeploymentKey: teamDeploymentKey})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if _, err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return url, s
}

func newKey(t *testing.T, s *pgtape.Store, tenant string) (id, key string) {
	t.Helper()
	k, whole, err := s.CreateKey(context.Background(), tenant)
	if err != nil {
		t.Fatal(err)
	}
	return k.ID, whole
}

// teamReplica starts one replica of a team gateway on url, in front of upstream.
func teamReplica(t *testing.T, upstream, url string, change func(*Config)) string {
	t.Helper()
	cfg, _ := testConfig(t, upstream)
	cfg.Storage.set(StoragePostgres, SourceFlag, "--storage")
	cfg.DatabaseURL.set(url, SourceEnv, pgtape.DatabaseURLEnv)
	cfg.DeploymentKey = teamDeploymentKey
	if change != nil {
		change(cfg)
	}
	_, base := startGateway(t, cfg)
	return base
}

// A replay recorded through replica A is served by replica B without an upstream call.
func TestTeamReplayAcrossReplicas(t *testing.T) {
	url, s := teamDB(t)
	_, key := newKey(t, s, "acme")
	mock := startMock(t, mockanthropic.Options{})
	a := teamReplica(t, mock.URL, url, nil)
	b := teamReplica(t, mock.URL, url, nil)
	for _, stream := range []bool{false, true} {
		body := messagesBody(fmt.Sprintf("shared %v", stream), stream)
		first := post(t, a, "/v1/messages", body, "x-api-key", key1, "x-rewind-key", key)
		if first.status != 200 || first.header.Get(HeaderReplay) != "miss" {
			t.Fatalf("first call through A: %d %s %s", first.status, first.header.Get(HeaderReplay), first.body)
		}
		hits := mock.Hits()
		second := post(t, b, "/v1/messages", body, "x-api-key", key1, "x-rewind-key", key)
		if second.status != 200 || second.header.Get(HeaderReplay) != "hit" || string(second.body) != string(first.body) {
			t.Fatalf("the same call through B: %d %s; want a replay of A's record, byte for byte", second.status, second.header.Get(HeaderReplay))
		}
		if mock.Hits() != hits {
			t.Fatalf("replica B called the upstream (%d calls, want %d)", mock.Hits(), hits)
		}
	}
}

// Tenant A's key never reads or replays tenant B's records, whatever the headers say; keys and
// control headers never reach the upstream; the provider's credential does.
func TestTeamTenantIsolation(t *testing.T) {
	url, s := teamDB(t)
	_, keyA := newKey(t, s, "tenant-a")
	_, keyB := newKey(t, s, "tenant-b")
	var mu sync.Mutex
	var leaked []string
	mock := startMock(t, mockanthropic.Options{OnRequest: func(r *http.Request, _ []byte) {
		mu.Lock()
		defer mu.Unlock()
		for k := range r.Header {
			if strings.HasPrefix(strings.ToLower(k), "x-rewind-") {
				leaked = append(leaked, k)
			}
		}
		if r.Header.Get("x-api-key") != key1 {
			leaked = append(leaked, "no provider credential")
		}
	}})
	gw := teamReplica(t, mock.URL, url, nil)
	body := messagesBody("secret of b", false)
	if c := post(t, gw, "/v1/messages", body, "x-api-key", key1, "x-rewind-key", keyB); c.status != 200 {
		t.Fatalf("B's call: %d %s", c.status, c.body)
	}
	hits := mock.Hits()
	c := post(t, gw, "/v1/messages", body, "x-api-key", key1, "x-rewind-key", keyA)
	if c.status != 200 || c.header.Get(HeaderReplay) != "miss" || mock.Hits() != hits+1 {
		t.Fatalf("A sent B's request: %d %s; want a miss (A cannot replay B's record)", c.status, c.header.Get(HeaderReplay))
	}
	for _, h := range [][]string{
		{"x-rewind-tenant", "tenant-b"},
		{"x-rewind-scope", "../tenant-b"},
		{"x-rewind-key", keyB}, // two keys
	} {
		c := post(t, gw, "/v1/messages", body, "x-api-key", key1, "x-rewind-key", keyA, h[0], h[1])
		if c.status != 403 && c.status != 401 {
			t.Fatalf("A's key with %s: %s: %d %s; want 401 or 403", h[0], h[1], c.status, c.body)
		}
	}
	for _, k := range []string{"", keyA[:len(keyA)-1] + "x", "rwk_nonsense"} {
		hdr := []string{"x-api-key", key1}
		if k != "" {
			hdr = append(hdr, "x-rewind-key", k)
		}
		if c := post(t, gw, "/v1/messages", body, hdr...); c.status != 401 {
			t.Fatalf("key %q: %d %s; want 401", k, c.status, c.body)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(leaked) > 0 {
		t.Fatalf("the upstream saw %v", leaked)
	}
}

// A key revoked through the store is refused at once by every replica, though each replica
// remembers the key's tenant: for a replay from memory, a replay from the database (recorded
// through the other replica) and a new call alike, and no call goes upstream.
func TestTeamRevokedKeyRefusedByEveryReplica(t *testing.T) {
	url, s := teamDB(t)
	id, key := newKey(t, s, "acme")
	mock := startMock(t, mockanthropic.Options{})
	replicas := []string{teamReplica(t, mock.URL, url, nil), teamReplica(t, mock.URL, url, nil)}
	for i, r := range replicas {
		for _, text := range []string{"hi", fmt.Sprint("recorded through ", i)} {
			if c := post(t, r, "/v1/messages", messagesBody(text, false), "x-api-key", key1, "x-rewind-key", key); c.status != 200 {
				t.Fatalf("before revoking: %d %s", c.status, c.body)
			}
		}
	}
	if err := s.RevokeKey(context.Background(), "acme", id); err != nil {
		t.Fatal(err)
	}
	hits := mock.Hits()
	for i, r := range replicas {
		for _, text := range []string{"hi", fmt.Sprint("recorded through ", 1-i), "new"} {
			if c := post(t, r, "/v1/messages", messagesBody(text, false), "x-api-key", key1, "x-rewind-key", key); c.status != 401 {
				t.Fatalf("after revoking, replica %d, %q: %d %s; want 401 at once (even for a replay from memory or the database)", i, text, c.status, c.body)
			}
		}
	}
	if n := mock.Hits() - hits; n != 0 {
		t.Fatalf("a revoked key made %d upstream calls", n)
	}
}

// The round trips to PostgreSQL of a call that is not a replay, once the replica knows the key.
// Exact replay: one before the upstream call (the key's check and the replay lookup, in one
// statement) and one after it (the store). Recording a tape: the key's check before, and after
// it the record's transaction in two (BEGIN with the position, the record with COMMIT).
func TestTeamMissRoundTrips(t *testing.T) {
	for _, c := range []struct {
		mode          string
		change        func(*Config)
		before, total int64
	}{
		{"replay", nil, 1, 2},
		{"record", func(c *Config) { c.Epoch.set("run-1", SourceFlag, "--epoch") }, 1, 3},
	} {
		t.Run(c.mode, func(t *testing.T) {
			url, s := teamDB(t)
			_, key := newKey(t, s, "acme")
			db := newPGRoundTrips(t, url)
			var atUpstream atomic.Int64
			mock := startMock(t, mockanthropic.Options{OnRequest: func(*http.Request, []byte) { atUpstream.Store(db.n()) }})
			gw := teamReplica(t, mock.URL, db.url, c.change)
			// The fewest of several calls: a connection new to the pool prepares its statements first.
			before, total := int64(1<<62), int64(1<<62)
			for i := range 8 {
				n := db.n()
				if r := post(t, gw, "/v1/messages", messagesBody(fmt.Sprint("miss ", i), false), "x-api-key", key1, "x-rewind-key", key); r.status != 200 {
					t.Fatalf("call %d: %d %s %s", i, r.status, r.header.Get(HeaderReplay), r.body)
				}
				before, total = min(before, atUpstream.Load()-n), min(total, db.n()-n)
			}
			if before != c.before || total != c.total {
				t.Fatalf("a call made %d round trips to the database before its upstream call and %d in all; want %d and %d", before, total, c.before, c.total)
			}
		})
	}
}

// Replaying a tape makes four round trips a call: the key's check, then the cursor's
// transaction in three (BEGIN with the cursor's lock, the record, the advance with COMMIT).
func TestTeamTapeReplayRoundTrips(t *testing.T) {
	url, s := teamDB(t)
	_, key := newKey(t, s, "acme")
	mock := startMock(t, mockanthropic.Options{})
	epoch := func(c *Config) { c.Epoch.set("run-1", SourceFlag, "--epoch") }
	rec := teamReplica(t, mock.URL, url, epoch)
	const n = 6
	for i := range n {
		if c := post(t, rec, "/v1/messages", messagesBody(fmt.Sprint("tape ", i), false), "x-api-key", key1, "x-rewind-key", key); c.status != 200 {
			t.Fatalf("record %d: %d %s", i, c.status, c.body)
		}
	}
	db := newPGRoundTrips(t, url)
	rep := teamReplica(t, mock.URL, db.url, func(c *Config) { epoch(c); c.ReplayCursor.set("ci", SourceFlag, "--replay-cursor") })
	total := int64(1 << 62)
	for i := range n {
		k := db.n()
		if c := post(t, rep, "/v1/messages", messagesBody(fmt.Sprint("tape ", i), false), "x-api-key", key1, "x-rewind-key", key); c.status != 200 {
			t.Fatalf("replay %d: %d %s", i, c.status, c.body)
		}
		total = min(total, db.n()-k)
	}
	if total != 4 {
		t.Fatalf("a tape replay made %d round trips to the database; want 4", total)
	}
}

func TestTeamRefusesAnUnmigratedDatabase(t *testing.T) {
	url := pgtest.Database(t)
	cfg, _ := testConfig(t, "http://127.0.0.1:1")
	cfg.Storage.set(StoragePostgres, SourceFlag, "--storage")
	cfg.DatabaseURL.set(url, SourceEnv, pgtape.DatabaseURLEnv)
	cfg.DeploymentKey = teamDeploymentKey
	if _, err := New(cfg); !errors.Is(err, pgtape.ErrMigrationsPending) || !strings.Contains(err.Error(), "gateway migrate") {
		t.Fatalf("a replica on an unmigrated database: %v; want ErrMigrationsPending naming `gateway migrate`", err)
	}
}

// A database that does not answer: the replica starts, is not ready, answers 503 with
// Retry-After, and never calls the upstream.
func TestTeamDatabaseDownIs503(t *testing.T) {
	mock := startMock(t, mockanthropic.Options{})
	gw := teamReplica(t, mock.URL, "postgres://postgres@127.0.0.1:1/none?sslmode=disable&connect_timeout=2", nil)
	c := post(t, gw, "/v1/messages", messagesBody("hi", false), "x-api-key", key1, "x-rewind-key", "rwk_0123456789abcdef_"+strings.Repeat("a", 64))
	if c.status != 503 || c.header.Get("Retry-After") == "" {
		t.Fatalf("database down: %d (Retry-After %q) %s; want 503 with Retry-After", c.status, c.header.Get("Retry-After"), c.body)
	}
	if mock.Hits() != 0 {
		t.Fatalf("the upstream was called %d times with the database down", mock.Hits())
	}
	for path, want := range map[string]int{"/healthz": 200, "/readyz": 503} {
		resp, err := testClient.Get(gw + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
}

// One tape recorded through two replicas at once, then replayed through two replicas at once:
// every position is recorded once and served once.
func TestTeamTapeAcrossReplicasInOrder(t *testing.T) {
	url, s := teamDB(t)
	_, key := newKey(t, s, "acme")
	mock := startMock(t, mockanthropic.Options{})
	epoch := func(c *Config) { c.Epoch.set("run-1", SourceFlag, "--epoch") }
	cursor := func(c *Config) { epoch(c); c.ReplayCursor.set("ci", SourceFlag, "--replay-cursor") }
	rec := []string{teamReplica(t, mock.URL, url, epoch), teamReplica(t, mock.URL, url, epoch)}
	rep := []string{teamReplica(t, mock.URL, url, cursor), teamReplica(t, mock.URL, url, cursor)}
	const n = 16
	run := func(replicas []string, what string) []int {
		positions := make([]int, n)
		var wg sync.WaitGroup
		errs := make(chan string, n)
		for i := range n {
			wg.Go(func() {
				c := post(t, replicas[i%2], "/v1/messages", messagesBody("same", false), "x-api-key", key1, "x-rewind-key", key, "x-rewind-request-id", fmt.Sprintf("call-%d", i))
				p, err := strconv.Atoi(c.header.Get(HeaderTapePosition))
				if c.status != 200 || err != nil {
					errs <- fmt.Sprintf("%s call %d: %d %s", what, i, c.status, c.body)
				}
				positions[i] = p
			})
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Fatal(e)
		}
		sort.Ints(positions)
		for i, p := range positions {
			if p != i {
				t.Fatalf("%s positions %v: want 0..%d each once", what, positions, n-1)
			}
		}
		return positions
	}
	run(rec, "recorded")
	hits := mock.Hits()
	run(rep, "replayed")
	if mock.Hits() != hits {
		t.Fatal("replaying called the upstream")
	}
	c := post(t, rep[0], "/v1/messages", messagesBody("same", false), "x-api-key", key1, "x-rewind-key", key)
	if c.status != 409 || !strings.Contains(string(c.body), "tape_end") {
		t.Fatalf("past the end: %d %s; want 409 tape_end", c.status, c.body)
	}
}

// tcpGate forwards loopback connections to target until closed; close drops every connection
// and refuses new ones (a database going down), open listens again on the same port (back).
type tcpGate struct {
	t      *testing.T
	addr   string
	target string
	mu     sync.Mutex
	ln     net.Listener
	conns  []net.Conn
}

func newTCPGate(t *testing.T, target string) *tcpGate {
	g := &tcpGate{t: t, target: target}
	g.open()
	t.Cleanup(g.close)
	return g
}

func (g *tcpGate) open() {
	addr := g.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		g.t.Fatal(err)
	}
	g.mu.Lock()
	g.ln, g.addr = ln, ln.Addr().String()
	g.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", g.target)
			if err != nil {
				c.Close()
				continue
			}
			g.mu.Lock()
			g.conns = append(g.conns, c, u)
			g.mu.Unlock()
			go func() { io.Copy(u, c); u.Close() }()
			go func() { io.Copy(c, u); c.Close() }()
		}
	}()
}

func (g *tcpGate) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ln != nil {
		g.ln.Close()
		g.ln = nil
	}
	for _, c := range g.conns {
		c.Close()
	}
	g.conns = nil
}

// gatedTeamDB returns the team database's URL through a TCP gate the test can close and open,
// the gate, and a key of tenant acme.
func gatedTeamDB(t *testing.T) (*neturl.URL, *tcpGate, string) {
	url, s := teamDB(t)
	_, key := newKey(t, s, "acme")
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	gate := newTCPGate(t, u.Host)
	u.Host = gate.addr
	return u, gate, key
}

// The database goes away mid-run and comes back: meanwhile every call is 503 with Retry-After
// and none reaches the upstream (in record mode nothing is paid for unrecorded); afterwards the
// same replica serves again, without a restart.
func TestTeamDatabaseRestartMidRun(t *testing.T) {
	u, gate, key := gatedTeamDB(t)
	mock := startMock(t, mockanthropic.Options{})
	for _, mode := range []func(*Config){nil, func(c *Config) { c.Epoch.set("restart", SourceFlag, "--epoch") }} {
		gw := teamReplica(t, mock.URL, u.String(), mode)
		if c := post(t, gw, "/v1/messages", messagesBody("before", false), "x-api-key", key1, "x-rewind-key", key); c.status != 200 {
			t.Fatalf("before: %d %s", c.status, c.body)
		}
		gate.close()
		hits := mock.Hits()
		for i := range 3 {
			c := post(t, gw, "/v1/messages", messagesBody(fmt.Sprintf("during %d", i), false), "x-api-key", key1, "x-rewind-key", key)
			if c.status != 503 || c.header.Get("Retry-After") == "" {
				t.Fatalf("database down: %d (Retry-After %q) %s; want 503 with Retry-After", c.status, c.header.Get("Retry-After"), c.body)
			}
		}
		if mock.Hits() != hits {
			t.Fatalf("%d upstream calls while the database was down; want none", mock.Hits()-hits)
		}
		resp, err := testClient.Get(gw + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 503 {
			t.Fatalf("/readyz with the database down: %d", resp.StatusCode)
		}
		gate.open()
		if c := post(t, gw, "/v1/messages", messagesBody("after", false), "x-api-key", key1, "x-rewind-key", key); c.status != 200 {
			t.Fatalf("after the database is back: %d %s; want 200 without restarting the replica", c.status, c.body)
		}
	}
}

// The database closes a replica's connections between two calls (a restart, an idle timeout):
// the next call is served on a new connection, not answered 503 on a dead one.
func TestTeamDatabaseClosedIdleConnections(t *testing.T) {
	u, gate, key := gatedTeamDB(t)
	mock := startMock(t, mockanthropic.Options{})
	for _, mode := range []func(*Config){nil, func(c *Config) { c.Epoch.set("closed", SourceFlag, "--epoch") }} {
		gw := teamReplica(t, mock.URL, u.String(), mode)
		for i := range 3 {
			if c := post(t, gw, "/v1/messages", messagesBody(fmt.Sprint("call ", i), false), "x-api-key", key1, "x-rewind-key", key); c.status != 200 {
				t.Fatalf("call %d: %d %s", i, c.status, c.body)
			}
			gate.close()
			gate.open()
		}
	}
}

// A replica that was idle for over a second makes no more round trips than a busy one: pgx's
// default would ping each connection before using it.
func TestTeamIdleReplicaRoundTrips(t *testing.T) {
	url, s := teamDB(t)
	_, key := newKey(t, s, "acme")
	db := newPGRoundTrips(t, url)
	var atUpstream atomic.Int64
	mock := startMock(t, mockanthropic.Options{OnRequest: func(*http.Request, []byte) { atUpstream.Store(db.n()) }})
	gw := teamReplica(t, mock.URL, db.url, nil)
	before, total := int64(1<<62), int64(1<<62)
	for i := range 4 {
		if i > 0 {
			time.Sleep(1100 * time.Millisecond) // idle past pgx's one second
		}
		n := db.n()
		if c := post(t, gw, "/v1/messages", messagesBody(fmt.Sprint("idle ", i), false), "x-api-key", key1, "x-rewind-key", key); c.status != 200 {
			t.Fatalf("call %d: %d %s", i, c.status, c.body)
		}
		if i > 0 {
			before, total = min(before, atUpstream.Load()-n), min(total, db.n()-n)
		}
	}
	if before != 1 || total != 2 {
		t.Fatalf("after a second idle, a miss made %d round trips before its upstream call and %d in all; want 1 and 2", before, total)
	}
}

// A team gateway logs one JSON line per request, with the id it returns in X-Rewind-Log-Id, the
// tenant and the outcome, and never the keys.
func TestTeamAccessLog(t *testing.T) {
	url, s := teamDB(t)
	_, key := newKey(t, s, "acme")
	mock := startMock(t, mockanthropic.Options{})
	cfg, log := testConfig(t, mock.URL)
	cfg.Storage.set(StoragePostgres, SourceFlag, "--storage")
	cfg.DatabaseURL.set(url, SourceEnv, pgtape.DatabaseURLEnv)
	cfg.DeploymentKey = teamDeploymentKey
	_, gw := startGateway(t, cfg)
	c := post(t, gw, "/v1/messages", messagesBody("logged", false), "x-api-key", key1, "x-rewind-key", key)
	id := c.header.Get(HeaderLogID)
	if c.status != 200 || len(id) != 16 {
		t.Fatalf("%d, log id %q", c.status, id)
	}
	bad := post(t, gw, "/v1/messages", messagesBody("logged", false), "x-api-key", key1)
	var found, refused bool
	for _, line := range strings.Split(log.String(), "\n") {
		var e struct {
			Msg, ID, Tenant, Replay string
			Status                  int
		}
		if json.Unmarshal([]byte(line), &e) != nil || e.Msg != "request" {
			continue
		}
		found = found || (e.ID == id && e.Tenant == "acme" && e.Status == 200 && e.Replay == "miss")
		refused = refused || (e.ID == bad.header.Get(HeaderLogID) && e.Tenant == "" && e.Status == 401)
	}
	if !found || !refused {
		t.Fatalf("no access-log lines for %s and the refused call in:\n%s", id, log.String())
	}
	if strings.Contains(log.String(), key) || strings.Contains(log.String(), key1) {
		t.Fatal("the log holds a key")
	}
}

// Replays on every replica add up in one receipt for the fleet, in the database.
func TestTeamFleetSavings(t *testing.T) {
	url, s := teamDB(t)
	_, key := newKey(t, s, "acme")
	mock := startMock(t, mockanthropic.Options{})
	a, b := teamReplica(t, mock.URL, url, nil), teamReplica(t, mock.URL, url, nil)
	body := messagesBody("fleet savings", false)
	post(t, a, "/v1/messages", body, "x-api-key", key1, "x-rewind-key", key)
	for _, r := range []string{a, b, b} {
		if c := post(t, r, "/v1/messages", body, "x-api-key", key1, "x-rewind-key", key); c.header.Get(HeaderReplay) != "hit" {
			t.Fatalf("replay: %d %s", c.status, c.header.Get(HeaderReplay))
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := FleetSavings(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		if got.ReplayedCalls == 3 && got.AvoidedTokens.Input > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the fleet's receipt counts %d replays; want 3 (one on A, two on B)", got.ReplayedCalls)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
