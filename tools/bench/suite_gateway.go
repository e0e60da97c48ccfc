package main

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agent-rewind/rewind/tools/bench/measure"
)

// The gateway-overhead suite (issue 8): "agent-rewind gateway" in front of the mock upstream,
// against calling the mock directly, in the same run:
//
//	pass-through added latency, p50 and p99     goal <= 0.3 ms and <= 1.5 ms
//	memory-replay hits per second               goal >= 10,000
//	time to first byte on SSE pass-through      goal: no added time (<= 0.3 ms, the p50 budget)
//	peak RSS with 200 concurrent streams        goal <= 100 MiB
//
// The pass-through latency and the SSE first byte are measured again with the mock serving
// HTTPS (a certificate made for the run, which the gateway trusts through SSL_CERT_FILE), the
// provider's real path, against calling it over TLS directly.
//
// Direct and gateway requests alternate one by one. Pass-through requests are all distinct
// (a counter in metadata.user_id), so no replay can answer them. The mock upstream runs in a
// child process (mock_proc.go), as a real upstream runs in another process than its client.
func init() {
	register(Suite{
		Name:        "gateway-overhead",
		Description: "agent-rewind gateway vs the mock upstream called directly: added latency p50/p99, replay hits/s, SSE time to first byte, RSS with 200 streams",
		Modules:     []string{"gateway", "cli"},
		Run:         runGatewayOverhead,
	})
}

// gatewayEventDelay spaces the mock's SSE events, so that a proxy buffering a stream would show
// a first byte later by several delays.
const gatewayEventDelay = 5 * time.Millisecond

func runGatewayOverhead(ctx context.Context, b *Bench) error {
	agent, err := b.Agent(ctx)
	if err != nil {
		return err
	}
	if err := agent.Require(ctx, b, []string{"gateway"}); err != nil {
		return err
	}
	b.UsesModules("tools") // the mock upstream is tools/mockanthropic
	mock, err := startMock(ctx, gatewayEventDelay)
	if err != nil {
		return err
	}
	defer mock.stop()
	ws, err := b.TempDir("gateway")
	if err != nil {
		return err
	}
	gw, err := startGateway(ctx, agent, ws, mock.URL)
	if err != nil {
		return err
	}
	defer gw.stop()
	client := newBenchClient()
	var seq atomic.Int64
	body := func(stream bool) []byte {
		return fmt.Appendf(nil, `{"model":"claude-sonnet-5-5","max_tokens":64,"stream":%v,"metadata":{"user_id":"bench-%d"},"messages":[{"role":"user","content":"Reply with OK."}]}`, stream, seq.Add(1))
	}
	// last is the latest call's exchange (the measure loop runs one call at a time).
	var last exchange
	callWith := func(client *http.Client, base string, stream bool) func(context.Context) (measure.Sample, error) {
		return func(ctx context.Context) (measure.Sample, error) {
			x, err := postMessages(ctx, client, base, body(stream))
			if err == nil && stream && !streamComplete(x.Body) {
				err = fmt.Errorf("%s: the stream ended without message_stop", base)
			}
			last = x
			return measure.Sample{Wall: x.Total, Elapsed: x.TTFB}, err
		}
	}
	call := func(base string, stream bool) func(context.Context) (measure.Sample, error) {
		return callWith(client, base, stream)
	}

	// Warm both paths (connections, the gateway's first-request work), then pass-through latency.
	if _, err := measure.Alternate(ctx, 50, measure.Arm{Name: "direct", Run: call(mock.URL, false)}, measure.Arm{Name: "gateway", Run: call(gw.URL, false)}); err != nil {
		return err
	}
	n := b.Reps(3000, 1000) // a p99 of 1,000 samples is the 10th slowest, not the 4th of 400: one hiccup of a shared machine does not decide it
	b.Logf("pass-through latency: %d requests each", n)
	cpu := gw.cpuMeter()
	lat, err := measure.Alternate(ctx, n,
		measure.Arm{Name: "through agent-rewind gateway (pass-through)", Run: call(gw.URL, false)},
		measure.Arm{Name: "mock upstream called directly", Run: call(mock.URL, false)})
	if err != nil {
		return err
	}
	b.Added("added_latency_p50", lat[0], lat[1], 50, AtMost(0.3), "")
	b.Added("added_latency_p99", lat[0], lat[1], 99, AtMost(1.5), "")
	cpu.report(b, "gateway_cpu_per_request", n, "pass-through request")

	// Memory-replay hits: one request recorded, then many identical ones from 8 workers.
	replayBody := []byte(`{"model":"claude-sonnet-5-5","max_tokens":64,"messages":[{"role":"user","content":"Replay me."}]}`)
	if _, err := postMessages(ctx, client, gw.URL, replayBody); err != nil {
		return err
	}
	m := b.Reps(20000, 3000)
	// Warm-up, both arms alike: the 8 workers' connections are made here, not in a timed batch.
	if err := hammer(ctx, client, gw.URL, replayBody, m/10, 8); err != nil {
		return err
	}
	if err := hammer(ctx, client, mock.URL, replayBody, m/10, 8); err != nil {
		return err
	}
	before, err := mock.Hits(ctx)
	if err != nil {
		return err
	}
	batch := func(base string) func(context.Context) (measure.Sample, error) {
		return func(ctx context.Context) (measure.Sample, error) {
			return measure.Timed(func() error { return hammer(ctx, client, base, replayBody, m, 8) })
		}
	}
	b.Logf("replay throughput: %d requests, 8 workers", m)
	rates, err := measure.Alternate(ctx, b.Reps(3, 2),
		measure.Arm{Name: fmt.Sprintf("gateway memory replay, %d identical requests", m), Run: batch(gw.URL)},
		measure.Arm{Name: fmt.Sprintf("mock upstream directly, %d requests", m), Run: batch(mock.URL)})
	if err != nil {
		return err
	}
	direct := int64(m) * int64(len(rates[1].Samples))
	after, err := mock.Hits(ctx)
	if err != nil {
		return err
	}
	if leaked := after - before - direct; leaked > 0 {
		return fmt.Errorf("the gateway sent %d of the repeated requests upstream: they were not replayed from memory", leaked)
	}
	b.Value("replay_hits_per_s", float64(m)/rates[0].MedianWall().Seconds(), "requests/s", "8 concurrent clients, keep-alive", arm(rates[0]), AtLeast(10000), "")
	b.Ratio("replay_vs_direct_time", rates[0], rates[1], NoGoal, "time for the same number of requests")

	// SSE time to first byte, pass-through.
	k := b.Reps(200, 40)
	b.Logf("SSE time to first byte: %d streams each", k)
	// Each stream's first byte, split where the mock has the whole request: the added time
	// before that is the gateway's request path, after it its response path.
	type legs struct{ before, after measure.Series }
	var gwLegs, directLegs legs
	stream := func(base string, l *legs) func(context.Context) (measure.Sample, error) {
		run := call(base, true)
		return func(ctx context.Context) (measure.Sample, error) {
			s, err := run(ctx)
			if err == nil && !last.Arrived.IsZero() {
				before := last.Arrived.Sub(last.Sent)
				l.before.Samples = append(l.before.Samples, measure.Sample{Wall: before})
				l.after.Samples = append(l.after.Samples, measure.Sample{Wall: s.Elapsed - before})
			}
			return s, err
		}
	}
	// The floors, in the same alternation: the least a Go HTTP reverse proxy process adds, and a
	// process that only copies bytes (floor_proc.go).
	proxy, err := startChild(ctx, "proxy", "--upstream", mock.URL)
	if err != nil {
		return err
	}
	defer proxy.stop()
	relay, err := startChild(ctx, "relay", "--upstream", mock.URL)
	if err != nil {
		return err
	}
	defer relay.stop()
	var proxyLegs, relayLegs legs
	if _, err := measure.Alternate(ctx, 5, measure.Arm{Name: "proxy", Run: stream(proxy.URL, &legs{})}, measure.Arm{Name: "relay", Run: stream(relay.URL, &legs{})}); err != nil {
		return err
	}
	cpu = gw.cpuMeter()
	sse, err := measure.Alternate(ctx, k,
		measure.Arm{Name: "SSE through the gateway", Run: stream(gw.URL, &gwLegs)},
		measure.Arm{Name: "SSE from the mock directly", Run: stream(mock.URL, &directLegs)},
		measure.Arm{Name: "SSE through a bare httputil.ReverseProxy process", Run: stream(proxy.URL, &proxyLegs)},
		measure.Arm{Name: "SSE through a TCP relay process", Run: stream(relay.URL, &relayLegs)})
	if err != nil {
		return err
	}
	cpu.report(b, "gateway_cpu_per_sse_stream", k, "SSE stream (all its events)")
	ttfb := func(s measure.Series) measure.Series {
		t := measure.Series{Name: s.Name + ", time to first byte"}
		for _, x := range s.Samples {
			t.Samples = append(t.Samples, measure.Sample{Wall: x.Elapsed})
		}
		return t
	}
	b.Added("sse_added_ttfb_p50", ttfb(sse[0]), ttfb(sse[1]), 50, AtMost(0.3),
		fmt.Sprintf("the mock spaces events by %v: a proxy that buffered the stream would add at least that much", gatewayEventDelay))
	b.Added("sse_bare_proxy_added_ttfb_p50", ttfb(sse[2]), ttfb(sse[1]), 50, NoGoal,
		"a floor: httputil.ReverseProxy with its defaults and nothing else, in a process of its own (bench proxy)")
	b.Added("sse_tcp_relay_added_ttfb_p50", ttfb(sse[3]), ttfb(sse[1]), 50, NoGoal,
		"a floor: a process that copies bytes between two TCP connections (bench relay): the cost of any process in the path")
	b.Added("sse_added_ttfb_vs_bare_proxy_p50", ttfb(sse[0]), ttfb(sse[2]), 50, NoGoal,
		"what the gateway's own work adds to a stream's first byte, beyond the least a Go reverse proxy does")
	gwLegs.before.Name, directLegs.before.Name = "SSE through the gateway, sent → the mock has the request", "SSE from the mock directly, sent → the mock has the request"
	gwLegs.after.Name, directLegs.after.Name = "SSE through the gateway, the mock has the request → first byte", "SSE from the mock directly, the mock has the request → first byte"
	if len(gwLegs.before.Samples) > 0 && len(directLegs.before.Samples) > 0 {
		b.Added("sse_added_ttfb_before_upstream_p50", gwLegs.before, directLegs.before, 50, NoGoal, "the part of the added first-byte time spent before the upstream has the request")
		b.Added("sse_added_ttfb_after_upstream_p50", gwLegs.after, directLegs.after, 50, NoGoal, "the part spent after it: the upstream's answer through the gateway")
	}
	proxyLegs.before.Name, proxyLegs.after.Name = "SSE through a bare httputil.ReverseProxy process, sent → the mock has the request", "SSE through a bare httputil.ReverseProxy process, the mock has the request → first byte"
	if len(proxyLegs.before.Samples) > 0 && len(directLegs.before.Samples) > 0 {
		b.Added("sse_bare_proxy_added_ttfb_before_upstream_p50", proxyLegs.before, directLegs.before, 50, NoGoal, "the bare proxy's part before the upstream has the request: the floor of the gateway's")
		b.Added("sse_bare_proxy_added_ttfb_after_upstream_p50", proxyLegs.after, directLegs.after, 50, NoGoal, "the bare proxy's part after it")
	}

	// The same over HTTPS, the provider's real path: the mock serves TLS with a certificate made
	// for this run, which the gateway trusts through SSL_CERT_FILE; the baseline calls the mock
	// over TLS directly (HTTP/1.1, kept alive).
	certDir, err := b.TempDir("gateway-cert")
	if err != nil {
		return err
	}
	cert, err := newThrowawayCert(certDir)
	if err != nil {
		return err
	}
	tlsMock, err := startTLSMock(ctx, gatewayEventDelay, cert)
	if err != nil {
		return err
	}
	defer tlsMock.stop()
	ws3, err := b.TempDir("gateway-tls")
	if err != nil {
		return err
	}
	gwTLS, err := startGatewayEnv(ctx, agent, ws3, tlsMock.URL, []string{"SSL_CERT_FILE=" + cert.CertFile})
	if err != nil {
		return err
	}
	defer gwTLS.stop()
	tlsClient := cert.client()
	if _, err := measure.Alternate(ctx, 50, measure.Arm{Name: "direct", Run: callWith(tlsClient, tlsMock.URL, false)}, measure.Arm{Name: "gateway", Run: call(gwTLS.URL, false)}); err != nil {
		return err
	}
	b.Logf("pass-through latency to an HTTPS upstream: %d requests each", n)
	cpu = gwTLS.cpuMeter()
	latTLS, err := measure.Alternate(ctx, n,
		measure.Arm{Name: "through agent-rewind gateway to an HTTPS upstream (pass-through)", Run: call(gwTLS.URL, false)},
		measure.Arm{Name: "mock upstream called directly over HTTPS", Run: callWith(tlsClient, tlsMock.URL, false)})
	if err != nil {
		return err
	}
	b.Added("tls_added_latency_p50", latTLS[0], latTLS[1], 50, AtMost(0.3), "the upstream over HTTPS, kept-alive connections both ways")
	b.Added("tls_added_latency_p99", latTLS[0], latTLS[1], 99, AtMost(1.5), "")
	cpu.report(b, "tls_gateway_cpu_per_request", n, "pass-through request to an HTTPS upstream")
	b.Logf("SSE time to first byte from an HTTPS upstream: %d streams each", k)
	cpu = gwTLS.cpuMeter()
	sseTLS, err := measure.Alternate(ctx, k,
		measure.Arm{Name: "SSE through the gateway from an HTTPS upstream", Run: call(gwTLS.URL, true)},
		measure.Arm{Name: "SSE from the mock directly over HTTPS", Run: callWith(tlsClient, tlsMock.URL, true)})
	if err != nil {
		return err
	}
	cpu.report(b, "tls_gateway_cpu_per_sse_stream", k, "SSE stream from an HTTPS upstream (all its events)")
	b.Added("tls_sse_added_ttfb_p50", ttfb(sseTLS[0]), ttfb(sseTLS[1]), 50, AtMost(0.3), "the upstream over HTTPS")

	// RSS with 200 concurrent streams, in a fresh gateway whose peak RSS is read when it exits.
	slow, err := startMock(ctx, 100*time.Millisecond)
	if err != nil {
		return err
	}
	defer slow.stop()
	ws2, err := b.TempDir("gateway-rss")
	if err != nil {
		return err
	}
	gw2, err := startGateway(ctx, agent, ws2, slow.URL)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for range 200 {
		wg.Go(func() {
			x, err := postMessages(ctx, client, gw2.URL, body(true))
			if err == nil && !streamComplete(x.Body) {
				err = fmt.Errorf("a stream ended without message_stop")
			}
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	rss := gw2.stop()
	close(errs)
	if err := <-errs; err != nil {
		return fmt.Errorf("200 concurrent streams: %w", err)
	}
	b.Value("rss_200_streams", float64(rss)/(1<<20), "MiB", "peak RSS of a gateway that served 200 concurrent SSE streams", nil, AtMost(100), "")
	return nil
}

// hammer sends body to base n times from workers goroutines; the first error stops it.
func hammer(ctx context.Context, c *http.Client, base string, body []byte, n, workers int) error {
	return hammerAPI(ctx, c, base, "/v1/messages", body, nil, n, workers)
}
