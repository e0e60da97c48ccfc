package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/agent-rewind/rewind/tools/bench/measure"
)

// BenchDatabaseEnv names a PostgreSQL database the gateway-team suite may migrate and fill
// (a throwaway one: it creates API keys and records). Without it the suite is skipped.
const BenchDatabaseEnv = "REWIND_BENCH_DATABASE_URL"

// The team-gateway suite (issue 18): two "agent-rewind gateway --storage postgres" replicas on
// one PostgreSQL, in front of the mock upstream:
//
//	pass-through added latency, p50 and p99      goal <= 0.5 ms and <= 2 ms (against the mock directly)
//	replay hits per second across two replicas   goal >= 3,000
//	first replay from PostgreSQL, p50 added      goal <= 1 ms (against a memory hit on the same replica)
func init() {
	register(Suite{
		Name:        "gateway-team",
		Description: "two team-gateway replicas on PostgreSQL (" + BenchDatabaseEnv + "): added latency p50/p99, replay hits/s across replicas, first replay from the database",
		Modules:     []string{"gateway", "cli", "tape"},
		Run:         runGatewayTeam,
	})
}

func runGatewayTeam(ctx context.Context, b *Bench) error {
	db := os.Getenv(BenchDatabaseEnv)
	if db == "" {
		return b.Skip("%s is not set: give a throwaway PostgreSQL database to measure the team gateway", BenchDatabaseEnv)
	}
	agent, err := b.Agent(ctx)
	if err != nil {
		return err
	}
	if err := agent.Require(ctx, b, []string{"gateway"}); err != nil {
		return err
	}
	b.UsesModules("tools", "tape/pgtape")
	env := []string{"REWIND_DATABASE_URL=" + db, "REWIND_DEPLOYMENT_KEY=" + strings.Repeat("5a", 32)}
	ws, err := b.TempDir("team")
	if err != nil {
		return err
	}
	run := func(args ...string) ([]byte, error) {
		cmd := agent.Command(ctx, ws, args...)
		cmd.Env = append(cmd.Env, env...)
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("agent-rewind %v: %w", args, err)
		}
		return out, nil
	}
	if _, err := run("gateway", "migrate"); err != nil {
		return err
	}
	out, err := run("--json", "gateway", "keys", "create", "--tenant", "bench")
	if err != nil {
		return err
	}
	var created struct{ Key string }
	if err := json.Unmarshal(out, &created); err != nil {
		return err
	}
	key := http.Header{"X-Rewind-Key": {created.Key}}

	mock, err := startMock(ctx, 0)
	if err != nil {
		return err
	}
	defer mock.stop()
	var replicas [2]*gatewayProc
	for i := range replicas {
		if replicas[i], err = startGatewayEnv(ctx, agent, ws, mock.URL, env, "--storage", "postgres"); err != nil {
			return err
		}
		defer replicas[i].stop()
	}
	a, bb := replicas[0].URL, replicas[1].URL
	client := newBenchClient()
	var seq atomic.Int64
	body := func() []byte {
		return fmt.Appendf(nil, `{"model":"claude-sonnet-5-5","max_tokens":64,"metadata":{"user_id":"team-%d"},"messages":[{"role":"user","content":"Reply with OK."}]}`, seq.Add(1))
	}
	call := func(base string, h http.Header) func(context.Context) (measure.Sample, error) {
		return func(ctx context.Context) (measure.Sample, error) {
			x, err := postMessagesHeader(ctx, client, base, body(), h)
			return measure.Sample{Wall: x.Total, Elapsed: x.TTFB}, err
		}
	}

	// Pass-through: distinct requests (a miss each: the key check and the lookup in one
	// statement, the upstream call, the store).
	if _, err := measure.Alternate(ctx, 50, measure.Arm{Name: "direct", Run: call(mock.URL, nil)}, measure.Arm{Name: "team", Run: call(a, key)}); err != nil {
		return err
	}
	n := b.Reps(2000, 1000) // a p99 of 1,000 samples is the 10th slowest, not the 3rd of 300
	b.Logf("team pass-through latency: %d requests each", n)
	lat, err := measure.Alternate(ctx, n,
		measure.Arm{Name: "through a team gateway replica (PostgreSQL; a miss each)", Run: call(a, key)},
		measure.Arm{Name: "mock upstream called directly", Run: call(mock.URL, nil)})
	if err != nil {
		return err
	}
	b.Added("team_added_latency_p50", lat[0], lat[1], 50, AtMost(0.5), "each request: API-key check and replay lookup (one statement), upstream call, replay stored (one commit)")
	b.Added("team_added_latency_p99", lat[0], lat[1], 99, AtMost(2), "")

	// First replay from PostgreSQL on replica B (recorded through A, not in B's cache), against
	// a memory hit of the same request on B.
	k := b.Reps(500, 100)
	first, again := measure.Series{Name: "first replay on replica B, from PostgreSQL"}, measure.Series{Name: "the same replay again on replica B, from memory"}
	for range k {
		bd := body()
		if _, err := postMessagesHeader(ctx, client, a, bd, key); err != nil {
			return err
		}
		for _, s := range []*measure.Series{&first, &again} {
			x, err := postMessagesHeader(ctx, client, bb, bd, key)
			if err != nil {
				return err
			}
			s.Samples = append(s.Samples, measure.Sample{Wall: x.Total})
		}
	}
	b.Added("team_first_replay_added_p50", first, again, 50, AtMost(1), "the database read a replica adds the first time it replays another replica's recording")

	// Replay hits across both replicas: one recorded request, 8 workers split over A and B.
	replayBody := []byte(`{"model":"claude-sonnet-5-5","max_tokens":64,"messages":[{"role":"user","content":"Replay me across replicas."}]}`)
	if _, err := postMessagesHeader(ctx, client, a, replayBody, key); err != nil {
		return err
	}
	m := b.Reps(20000, 3000)
	// Warm-up, both arms alike: the 8 workers' connections, and each replica's database pool
	// grown to the concurrency, are made here and not inside the first timed batch.
	for i, base := range []string{a, bb} {
		if err := hammerHeader(ctx, client, base, replayBody, key, m/10, 4); err != nil {
			return fmt.Errorf("warm-up of replica %d: %w", i+1, err)
		}
	}
	if err := hammer(ctx, client, mock.URL, replayBody, m/10, 8); err != nil {
		return err
	}
	before, err := mock.Hits(ctx)
	if err != nil {
		return err
	}
	both := func(ctx context.Context) (measure.Sample, error) {
		return measure.Timed(func() error {
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for i, base := range []string{a, bb} {
				wg.Go(func() { errs[i] = hammerHeader(ctx, client, base, replayBody, key, m/2, 4) })
			}
			wg.Wait()
			if errs[0] != nil {
				return errs[0]
			}
			return errs[1]
		})
	}
	direct := func(ctx context.Context) (measure.Sample, error) {
		return measure.Timed(func() error { return hammer(ctx, client, mock.URL, replayBody, m, 8) })
	}
	b.Logf("team replay throughput: %d requests over two replicas, 8 workers", m)
	rates, err := measure.Alternate(ctx, b.Reps(3, 2),
		measure.Arm{Name: fmt.Sprintf("two team replicas replaying, %d identical requests", m), Run: both},
		measure.Arm{Name: fmt.Sprintf("mock upstream directly, %d requests", m), Run: direct})
	if err != nil {
		return err
	}
	after, err := mock.Hits(ctx)
	if err != nil {
		return err
	}
	if leaked := after - before - int64(m)*int64(len(rates[1].Samples)); leaked > 0 {
		return fmt.Errorf("the replicas sent %d of the repeated requests upstream", leaked)
	}
	b.Value("team_replay_hits_per_s", float64(m)/rates[0].MedianWall().Seconds(), "requests/s", "two replicas, 8 concurrent clients, keep-alive; every request's API key checked in PostgreSQL", arm(rates[0]), AtLeast(3000), "")
	b.Ratio("team_replay_vs_direct_time", rates[0], rates[1], NoGoal, "time for the same number of requests")
	return nil
}

// hammerHeader is hammer with extra headers.
func hammerHeader(ctx context.Context, c *http.Client, base string, body []byte, h http.Header, n, workers int) error {
	return hammerAPI(ctx, c, base, "/v1/messages", body, h, n, workers)
}
