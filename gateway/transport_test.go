package gateway

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"
)

// bodySpy records the type of each request body the transport is given.
type bodySpy struct{ types chan string }

func (s bodySpy) RoundTrip(r *http.Request) (*http.Response, error) {
	s.types <- fmt.Sprintf("%T", r.Body)
	if r.Body != nil {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	return nil, errors.New("spy: no upstream")
}

// TestTransportGetsInMemoryBody: the transport sends headers and body in one write only for
// a body it knows is in memory; the gateway gives it one, not the reverse proxy's wrapper.
func TestTransportGetsInMemoryBody(t *testing.T) {
	spy := bodySpy{make(chan string, 1)}
	cfg, _ := testConfig(t, "http://127.0.0.1:1")
	cfg.Transport = spy
	_, gw := startGateway(t, cfg)
	post(t, gw, "/v1/messages", messagesBody("one write", false), "x-api-key", key1)
	if got := <-spy.types; got != "io.nopCloserWriterTo" {
		t.Errorf("the transport got a %s body, not an in-memory reader", got)
	}
}
