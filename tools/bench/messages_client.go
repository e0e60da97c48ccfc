package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// benchAPIKey is the credential the bench sends: the mock upstream only checks that one is there.
const benchAPIKey = "sk-ant-bench-not-a-real-key"

// exchange is one finished Messages call.
type exchange struct {
	Sent  time.Time     // when the request was handed to the client
	TTFB  time.Duration // request sent → first byte of the response body
	Total time.Duration // request sent → last byte of the response body
	Body  []byte
	// Arrived is when the upstream had the whole request, if the upstream is the bench's
	// child mock (headerArrived); zero otherwise.
	Arrived time.Time
}

// newBenchClient returns an HTTP client that keeps enough idle connections for the concurrency
// the suites use, so that connection setup does not land inside a latency sample.
func newBenchClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConns: 512, MaxIdleConnsPerHost: 512, IdleConnTimeout: time.Minute, DisableCompression: true}}
}

// postMessages sends body to base+"/v1/messages" and reads the whole response. A status other
// than 200 is an error quoting the response.
func postMessages(ctx context.Context, c *http.Client, base string, body []byte) (exchange, error) {
	return postMessagesHeader(ctx, c, base, body, nil)
}

// postMessagesHeader is postMessages with extra headers (a team gateway's key).
func postMessagesHeader(ctx context.Context, c *http.Client, base string, body []byte, extra http.Header) (exchange, error) {
	return postAPI(ctx, c, base, "/v1/messages", body, extra)
}

// benchOpenAIKey is the credential the bench sends to the OpenAI paths.
const benchOpenAIKey = "Bearer sk-openai-bench-not-a-real-key"

// postAPI sends body to base+path, with the credential of the path's provider and extra
// headers, and reads the whole response.
func postAPI(ctx context.Context, c *http.Client, base, path string, body []byte, extra http.Header) (exchange, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+path, bytes.NewReader(body))
	if err != nil {
		return exchange{}, err
	}
	req.Header.Set("content-type", "application/json")
	if path == "/v1/messages" {
		req.Header.Set("anthropic-version", "2023-06-01")
		req.Header.Set("x-api-key", benchAPIKey)
	} else {
		req.Header.Set("authorization", benchOpenAIKey)
	}
	for k, vs := range extra {
		req.Header[k] = vs
	}
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return exchange{}, err
	}
	defer resp.Body.Close()
	x := exchange{Sent: start, Arrived: arrived(resp.Header)}
	first := make([]byte, 1)
	n, err := io.ReadFull(resp.Body, first)
	x.TTFB = time.Since(start)
	if err != nil && err != io.ErrUnexpectedEOF {
		return x, fmt.Errorf("read the response: %w", err)
	}
	rest, err := io.ReadAll(resp.Body)
	x.Total = time.Since(start)
	if err != nil {
		return x, fmt.Errorf("read the response: %w", err)
	}
	x.Body = append(first[:n], rest...)
	if resp.StatusCode != http.StatusOK {
		return x, fmt.Errorf("%s: status %d: %.300s", base, resp.StatusCode, x.Body)
	}
	return x, nil
}

// streamComplete reports whether an SSE body ends with message_stop.
func streamComplete(b []byte) bool {
	return bytes.Contains(b, []byte("event: message_stop\n"))
}
