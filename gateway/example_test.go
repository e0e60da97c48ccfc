package gateway_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/agent-rewind/rewind/gateway"
	"github.com/agent-rewind/rewind/tools/mockanthropic"
)

// Example puts a gateway in front of a mock Anthropic upstream and sends one request twice:
// the second is answered from memory.
func Example() {
	upstream := mockanthropic.New(mockanthropic.Options{})
	if err := upstream.Start(); err != nil {
		panic(err)
	}
	defer upstream.Close()

	ws, _ := os.MkdirTemp("", "gateway-example-")
	defer os.RemoveAll(ws)
	cfg := gateway.DefaultConfig(ws)
	cfg.Upstream.Value = upstream.URL
	g, err := gateway.New(cfg)
	if err != nil {
		panic(err)
	}
	defer g.Close()
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error)
	go func() { served <- g.Serve(ctx, ln) }()

	for range 2 {
		req, _ := http.NewRequest("POST", "http://"+ln.Addr().String()+"/v1/messages",
			strings.NewReader(`{"model":"claude-sonnet-5-5","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("x-api-key", "sk-ant-example")
		req.Header.Set("anthropic-version", "2023-06-01")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		fmt.Println(resp.StatusCode, resp.Header.Get(gateway.HeaderReplay))
	}
	fmt.Println("upstream calls:", upstream.Hits())
	stop()
	<-served
	// Output:
	// 200 miss
	// 200 hit
	// upstream calls: 1
}
