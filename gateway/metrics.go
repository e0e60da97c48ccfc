package gateway

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// metrics are the gateway's counters, exposed in the Prometheus text format (version 0.0.4) by
// MetricsHandler, which the embedding program serves on a listener of its own (never on the
// proxy's port, where callers could read them).
type metrics struct {
	requests, replays, misses, bypassed, dbErrors atomic.Int64
	upstream                                      histogram
}

// upstreamBuckets are the upper bounds, in seconds, of the upstream latency histogram (time to
// the response's headers).
var upstreamBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

type histogram struct {
	counts [14]atomic.Int64 // one per bucket, then +Inf
	sumNS  atomic.Int64
}

func (h *histogram) observe(d time.Duration) {
	s := d.Seconds()
	i := 0
	for i < len(upstreamBuckets) && s > upstreamBuckets[i] {
		i++
	}
	h.counts[i].Add(1)
	h.sumNS.Add(int64(d))
}

// MetricsHandler serves the gateway's metrics in the Prometheus text exposition format.
func (g *Gateway) MetricsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		counter := func(name, help string, v int64) {
			fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s counter\n%s %d\n", name, help, name, name, v)
		}
		m := &g.metrics
		counter("agent_rewind_gateway_requests_total", "Requests received (health checks excluded).", m.requests.Load())
		counter("agent_rewind_gateway_replays_total", "Calls of the understood APIs (Messages, Responses, Chat Completions) answered from a recording (memory, the shared store or a tape).", m.replays.Load())
		counter("agent_rewind_gateway_misses_total", "Calls of the understood APIs sent upstream to be recorded.", m.misses.Load())
		counter("agent_rewind_gateway_bypassed_total", "Calls of the understood APIs forwarded without replay or record, because they are never replayed (X-Rewind-Bypass).", m.bypassed.Load())
		counter("agent_rewind_gateway_database_errors_total", "Operations on the team database or the tape store that failed.", m.dbErrors.Load())
		depth := 0
		if g.queue != nil {
			depth = g.queue.Waiting()
		}
		fmt.Fprintf(&b, "# HELP agent_rewind_gateway_tape_queue_depth Tape exchanges waiting for their turn.\n# TYPE agent_rewind_gateway_tape_queue_depth gauge\nagent_rewind_gateway_tape_queue_depth %d\n", depth)
		const h = "agent_rewind_gateway_upstream_seconds"
		fmt.Fprintf(&b, "# HELP %s Time from sending a call of the understood APIs upstream to its response headers.\n# TYPE %s histogram\n", h, h)
		var cum int64
		for i := range len(upstreamBuckets) + 1 {
			cum += m.upstream.counts[i].Load()
			le := "+Inf"
			if i < len(upstreamBuckets) {
				le = strconv.FormatFloat(upstreamBuckets[i], 'g', -1, 64)
			}
			fmt.Fprintf(&b, "%s_bucket{le=%q} %d\n", h, le, cum)
		}
		fmt.Fprintf(&b, "%s_sum %s\n%s_count %d\n", h, strconv.FormatFloat(float64(m.upstream.sumNS.Load())/1e9, 'g', -1, 64), h, cum)
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		w.Write([]byte(b.String()))
	})
}
