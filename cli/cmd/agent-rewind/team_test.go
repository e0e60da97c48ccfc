package main

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/tape/pgtape"
	"github.com/agent-rewind/rewind/tape/pgtape/pgtest"
	"github.com/agent-rewind/rewind/tools/mockanthropic"
	"github.com/jackc/pgx/v5"
)

const teamKeyHex = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

// A team gateway as an operator runs it: migrate (twice: the second is a no-op), create a key,
// two replica processes on one database; a replay recorded through one is served by the other;
// a revoked key is refused at once by both.
func TestTeamGatewayTwoReplicas(t *testing.T) {
	db := pgtest.Database(t)
	env := []string{pgtape.DatabaseURLEnv + "=" + db, pgtape.DeploymentKeyEnv + "=" + teamKeyHex}
	dir := t.TempDir()

	var mig struct {
		Applied       []int `json:"applied"`
		SchemaVersion int   `json:"schema_version"`
	}
	for i, want := range []int{pgtape.SchemaVersion, 0} {
		r := runEnv(t, dir, env, "--json", "gateway", "migrate")
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &mig) != nil || len(mig.Applied) != want {
			t.Fatalf("migrate #%d: exit %d, %s %s; want %d migrations applied", i+1, r.code, r.stdout, r.stderr, want)
		}
		if strings.Contains(r.stdout+r.stderr, "password") {
			t.Fatal("migrate printed a password")
		}
	}
	r := runEnv(t, dir, env, "--json", "gateway", "keys", "create", "--tenant", "acme")
	var created struct {
		ID  string `json:"id"`
		Key string `json:"key"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &created) != nil || !strings.HasPrefix(created.Key, pgtape.APIKeyPrefix) {
		t.Fatalf("keys create: exit %d, %s %s", r.code, r.stdout, r.stderr)
	}

	mock := mockanthropic.New(mockanthropic.Options{})
	if err := mock.Start(); err != nil {
		t.Fatal(err)
	}
	defer mock.Close()
	a := startGatewayProc(t, dir, env, "--storage", "postgres", "--upstream", mock.URL)
	b := startGatewayProc(t, dir, env, "--storage", "postgres", "--upstream", mock.URL)
	if !strings.Contains(a.stderr.String(), "team replay") {
		t.Fatalf("the banner does not describe team mode:\n%s", a.stderr.String())
	}

	code, h, first := postMessages(t, a.url, e2eBody, "x-rewind-key", created.Key)
	if code != 200 || h.Get("X-Rewind-Replay") != "miss" {
		t.Fatalf("through A: %d %s %s", code, h.Get("X-Rewind-Replay"), first)
	}
	hits := mock.Hits()
	code, h, second := postMessages(t, b.url, e2eBody, "x-rewind-key", created.Key)
	if code != 200 || h.Get("X-Rewind-Replay") != "hit" || string(second) != string(first) || mock.Hits() != hits {
		t.Fatalf("through B: %d %s; want A's recording replayed byte for byte without an upstream call", code, h.Get("X-Rewind-Replay"))
	}
	if code, _, _ := postMessages(t, b.url, e2eBody); code != 401 {
		t.Fatalf("without a key: %d, want 401", code)
	}

	if r := runEnv(t, dir, env, "gateway", "keys", "revoke", "--tenant", "acme", created.ID); r.code != 0 {
		t.Fatalf("keys revoke: exit %d %s", r.code, r.stderr)
	}
	for _, g := range []*gatewayProc{a, b} {
		if code, _, body := postMessages(t, g.url, e2eBody, "x-rewind-key", created.Key); code != 401 {
			t.Fatalf("a revoked key: %d %s; want 401 from every replica at once", code, body)
		}
	}
	r = runEnv(t, dir, env, "--json", "gateway", "keys", "list", "--tenant", "acme")
	if r.code != 0 || !strings.Contains(r.stdout, `"revoked_at"`) {
		t.Fatalf("keys list: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	for _, g := range []*gatewayProc{a, b} {
		if c := g.stop(t); c != 0 {
			t.Fatalf("SIGTERM: exit %d\n%s", c, g.stderr.String())
		}
	}
	// The fleet's receipt: the one replay, made on B, written when B stopped.
	r = runEnv(t, dir, env, "--json", "savings", "--fleet")
	var fleet struct {
		ReplayedCalls int `json:"replayed_calls"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &fleet) != nil || fleet.ReplayedCalls != 1 {
		t.Fatalf("savings --fleet: exit %d %s %s; want 1 replayed call", r.code, r.stdout, r.stderr)
	}
	if r := runEnv(t, dir, env, "savings", "--fleet"); r.code != 0 || !regexp.MustCompile(`replayed calls\s+1\n`).MatchString(r.stdout) {
		t.Fatalf("savings --fleet as text: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
}

// A replica killed with SIGKILL in the middle of a call it records leaves nothing torn: no
// record, no replay, and the next replica records the call from position 0.
func TestTeamGatewaySIGKILLMidStream(t *testing.T) {
	db := pgtest.Database(t)
	env := []string{pgtape.DatabaseURLEnv + "=" + db, pgtape.DeploymentKeyEnv + "=" + teamKeyHex}
	dir := t.TempDir()
	if r := runEnv(t, dir, env, "gateway", "migrate"); r.code != 0 {
		t.Fatalf("migrate: %s", r.stderr)
	}
	r := runEnv(t, dir, env, "--json", "gateway", "keys", "create", "--tenant", "acme")
	var created struct{ Key string }
	json.Unmarshal([]byte(r.stdout), &created)

	slow := mockanthropic.New(mockanthropic.Options{EventDelay: 300 * time.Millisecond})
	if err := slow.Start(); err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	for _, args := range [][]string{{"--epoch", "killed"}, nil} {
		g := startGatewayProc(t, dir, env, append([]string{"--storage", "postgres", "--upstream", slow.URL}, args...)...)
		before := slow.Hits()
		done := make(chan struct{})
		go func() {
			defer close(done)
			req, _ := http.NewRequest("POST", g.url+"/v1/messages", strings.NewReader(e2eBody))
			req.Header.Set("x-api-key", "sk-ant-e2e")
			req.Header.Set("anthropic-version", "2023-06-01")
			req.Header.Set("x-rewind-key", created.Key)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
		deadline := time.Now().Add(30 * time.Second)
		for slow.Hits() == before && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(400 * time.Millisecond) // the upstream is mid-stream
		g.cmd.Process.Signal(syscall.SIGKILL)
		<-g.done
		<-done
	}
	conn, err := pgx.Connect(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var records, replays, epochs int
	conn.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM rewind_records), (SELECT count(*) FROM rewind_replay), (SELECT count(*) FROM rewind_epochs)`).Scan(&records, &replays, &epochs)
	if records != 0 || replays != 0 || epochs != 0 {
		t.Fatalf("after SIGKILL mid-stream: %d records, %d replays, %d epoch counters; want none", records, replays, epochs)
	}
	fast := mockanthropic.New(mockanthropic.Options{})
	if err := fast.Start(); err != nil {
		t.Fatal(err)
	}
	defer fast.Close()
	g := startGatewayProc(t, dir, env, "--storage", "postgres", "--upstream", fast.URL, "--epoch", "killed")
	if code, h, body := postMessages(t, g.url, e2eBody, "x-rewind-key", created.Key); code != 200 || h.Get("X-Rewind-Tape-Position") != "0" {
		t.Fatalf("the next replica: %d position %q %s; want position 0", code, h.Get("X-Rewind-Tape-Position"), body)
	}
}
