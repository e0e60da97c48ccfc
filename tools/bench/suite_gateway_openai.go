package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/agent-rewind/rewind/tools/bench/measure"
)

// The OpenAI rows of the gateway (issue 31), beside the Anthropic ones, from one gateway
// process in front of the mock upstream (which serves all three APIs), each against the mock
// called directly in the same alternation:
//
//	<api>_added_latency_p50, _p99     pass-through, a distinct JSON request each (goals as gateway-overhead's)
//	<api>_sse_added_ttfb_p50          time to the first byte of a stream (the mock spaces events)
//	<api>_replay_hits_per_s           memory replays of one recorded request, 8 workers
//
// for api messages (Anthropic Messages), responses (OpenAI Responses, "store": false) and chat
// (OpenAI Chat Completions).
func init() {
	register(Suite{
		Name:        "gateway-openai",
		Description: "agent-rewind gateway for the three APIs (Anthropic Messages, OpenAI Responses and Chat Completions) vs the mock upstream called directly: added latency p50/p99, SSE time to first byte, replay hits/s",
		Modules:     []string{"gateway", "cli"},
		Run:         runGatewayOpenAI,
	})
}

// benchAPI is one API as the suite calls it: its path, and a request body (distinct for each
// seq, streamed or not).
type benchAPI struct {
	name, path string
	body       func(seq int64, stream bool) []byte
	complete   []byte // what a complete stream contains
}

var benchAPIs = []benchAPI{
	{"messages", "/v1/messages", func(n int64, stream bool) []byte {
		return fmt.Appendf(nil, `{"model":"claude-sonnet-5-5","max_tokens":64,"stream":%v,"metadata":{"user_id":"bench-%d"},"messages":[{"role":"user","content":"Reply with OK."}]}`, stream, n)
	}, []byte("event: message_stop\n")},
	{"responses", "/v1/responses", func(n int64, stream bool) []byte {
		return fmt.Appendf(nil, `{"model":"gpt-5","store":false,"stream":%v,"metadata":{"bench":"%d"},"input":"Reply with OK."}`, stream, n)
	}, []byte("event: response.completed\n")},
	{"chat", "/v1/chat/completions", func(n int64, stream bool) []byte {
		return fmt.Appendf(nil, `{"model":"gpt-5","stream":%v,"metadata":{"bench":"%d"},"messages":[{"role":"user","content":"Reply with OK."}]}`, stream, n)
	}, []byte("data: [DONE]\n")},
}

func runGatewayOpenAI(ctx context.Context, b *Bench) error {
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
	ws, err := b.TempDir("gateway-openai")
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
	for _, api := range benchAPIs {
		call := func(base string, stream bool) func(context.Context) (measure.Sample, error) {
			return func(ctx context.Context) (measure.Sample, error) {
				x, err := postAPI(ctx, client, base, api.path, api.body(seq.Add(1), stream), nil)
				if err == nil && stream && !bytes.Contains(x.Body, api.complete) {
					err = fmt.Errorf("%s%s: the stream ended without %q", base, api.path, api.complete)
				}
				return measure.Sample{Wall: x.Total, Elapsed: x.TTFB}, err
			}
		}
		if _, err := measure.Alternate(ctx, 50, measure.Arm{Name: "direct", Run: call(mock.URL, false)}, measure.Arm{Name: "gateway", Run: call(gw.URL, false)}); err != nil {
			return err
		}
		n := b.Reps(3000, 1000)
		b.Logf("%s pass-through latency: %d requests each", api.name, n)
		lat, err := measure.Alternate(ctx, n,
			measure.Arm{Name: fmt.Sprintf("%s through agent-rewind gateway (pass-through)", api.path), Run: call(gw.URL, false)},
			measure.Arm{Name: fmt.Sprintf("%s of the mock upstream called directly", api.path), Run: call(mock.URL, false)})
		if err != nil {
			return err
		}
		b.Added(api.name+"_added_latency_p50", lat[0], lat[1], 50, AtMost(0.3), "")
		b.Added(api.name+"_added_latency_p99", lat[0], lat[1], 99, AtMost(1.5), "")

		k := b.Reps(200, 40)
		b.Logf("%s SSE time to first byte: %d streams each", api.name, k)
		sse, err := measure.Alternate(ctx, k,
			measure.Arm{Name: fmt.Sprintf("%s SSE through the gateway", api.path), Run: call(gw.URL, true)},
			measure.Arm{Name: fmt.Sprintf("%s SSE from the mock directly", api.path), Run: call(mock.URL, true)})
		if err != nil {
			return err
		}
		ttfb := func(s measure.Series) measure.Series {
			t := measure.Series{Name: s.Name + ", time to first byte"}
			for _, x := range s.Samples {
				t.Samples = append(t.Samples, measure.Sample{Wall: x.Elapsed})
			}
			return t
		}
		b.Added(api.name+"_sse_added_ttfb_p50", ttfb(sse[0]), ttfb(sse[1]), 50, AtMost(0.3),
			fmt.Sprintf("the mock spaces events by %v", gatewayEventDelay))

		replay := api.body(0, false)
		if _, err := postAPI(ctx, client, gw.URL, api.path, replay, nil); err != nil {
			return err
		}
		m := b.Reps(20000, 3000)
		for _, base := range []string{gw.URL, mock.URL} { // warm the 8 workers' connections
			if err := hammerAPI(ctx, client, base, api.path, replay, nil, m/10, 8); err != nil {
				return err
			}
		}
		before, err := mock.Hits(ctx)
		if err != nil {
			return err
		}
		batch := func(base string) func(context.Context) (measure.Sample, error) {
			return func(ctx context.Context) (measure.Sample, error) {
				return measure.Timed(func() error { return hammerAPI(ctx, client, base, api.path, replay, nil, m, 8) })
			}
		}
		b.Logf("%s replay throughput: %d requests, 8 workers", api.name, m)
		rates, err := measure.Alternate(ctx, b.Reps(3, 2),
			measure.Arm{Name: fmt.Sprintf("%s gateway memory replay, %d identical requests", api.path, m), Run: batch(gw.URL)},
			measure.Arm{Name: fmt.Sprintf("%s mock upstream directly, %d requests", api.path, m), Run: batch(mock.URL)})
		if err != nil {
			return err
		}
		after, err := mock.Hits(ctx)
		if err != nil {
			return err
		}
		if leaked := after - before - int64(m)*int64(len(rates[1].Samples)); leaked > 0 {
			return fmt.Errorf("the gateway sent %d of the repeated %s requests upstream: they were not replayed from memory", leaked, api.path)
		}
		b.Value(api.name+"_replay_hits_per_s", float64(m)/rates[0].MedianWall().Seconds(), "requests/s", "8 concurrent clients, keep-alive", arm(rates[0]), AtLeast(10000), "")
	}
	return nil
}

// hammerAPI sends body to base+path n times from workers concurrent clients, with extra
// headers; the first failure stops it.
func hammerAPI(ctx context.Context, c *http.Client, base, path string, body []byte, extra http.Header, n, workers int) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for next.Add(1) <= int64(n) && ctx.Err() == nil {
				if _, err := postAPI(ctx, c, base, path, body, extra); err != nil {
					cancel(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return context.Cause(ctx)
}
