package gateway

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/tools/mockanthropic"
)

// On shutdown a stream in progress finishes whole, and the gateway stops taking connections
// (a load balancer sends new requests elsewhere).
func TestDrainLetsStreamsFinish(t *testing.T) {
	mock := startMock(t, mockanthropic.Options{EventDelay: 100 * time.Millisecond})
	cfg, _ := testConfig(t, mock.URL)
	g, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	base, stop := serve(t, g)
	req, _ := http.NewRequest("POST", base+"/v1/messages", strings.NewReader(messagesBody("drain", true)))
	req.Header.Set("x-api-key", key1)
	req.Header.Set("anthropic-version", "2023-06-01")
	resp, err := testClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	first := make([]byte, 1)
	if _, err := io.ReadFull(resp.Body, first); err != nil {
		t.Fatal(err)
	}
	stopped := make(chan struct{})
	go func() { stop(); close(stopped) }()
	for !g.draining.Load() {
		time.Sleep(time.Millisecond)
	}
	rest, err := io.ReadAll(resp.Body)
	if err != nil || !bytes.Contains(rest, []byte("message_stop")) {
		t.Fatalf("the stream in progress was cut by the drain: %v, %d bytes", err, len(rest))
	}
	<-stopped
	if _, err := testClient.Get(base + "/healthz"); err == nil {
		t.Fatal("a new request was accepted after the drain")
	}
}
