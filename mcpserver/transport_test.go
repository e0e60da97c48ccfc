package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/mcpserver"
	"github.com/agent-rewind/rewind/mcpserver/internal/fakeworkspace"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// wireReply is one JSON-RPC response as it crossed the wire.
type wireReply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// rawSession is a server on StdioTransport driven line by line.
type rawSession struct {
	t   *testing.T
	in  *io.PipeWriter
	out *bufio.Reader
}

func (s *rawSession) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatalf("send: %v", err)
	}
}

func (s *rawSession) recv() wireReply {
	s.t.Helper()
	line, err := s.out.ReadBytes('\n')
	if err != nil {
		s.t.Fatalf("recv: %v", err)
	}
	var r wireReply
	if err := json.Unmarshal(line, &r); err != nil {
		s.t.Fatalf("recv: not JSON: %v: %q", err, line)
	}
	return r
}

// wantError reads the next response and requires a JSON-RPC error with id and code.
func (s *rawSession) wantError(id string, code int64, says string) {
	s.t.Helper()
	r := s.recv()
	if string(r.ID) != id || r.Error == nil || r.Error.Code != code || !strings.Contains(r.Error.Message, says) {
		s.t.Fatalf("want error %d with id %s saying %q, got id %s error %+v result %s", code, id, says, r.ID, r.Error, r.Result)
	}
}

// TestStdioTransportSurvivesBadMessages: a line over the size limit, a line that is not JSON,
// one that is not JSON-RPC and a batch are each answered with a JSON-RPC error (with the line's
// id when it can be read) and reported, and the session goes on serving tool calls.
func TestStdioTransportSurvivesBadMessages(t *testing.T) {
	const limit = 4096
	srv, err := mcpserver.New(fakeworkspace.New(), mcpserver.Options{Profile: "all", Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	log := &strings.Builder{}
	done := make(chan error, 1)
	go func() {
		done <- srv.Run(context.Background(), &mcpserver.StdioTransport{In: inR, Out: outW, Log: syncWriter{log, make(chan struct{}, 1)}, MaxMessageSize: limit})
		outW.Close()
	}()
	s := &rawSession{t: t, in: inW, out: bufio.NewReader(outR)}

	s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if r := s.recv(); r.Error != nil || string(r.ID) != "1" {
		t.Fatalf("initialize: %+v", r)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	big := strings.Repeat("x", limit)
	s.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"guard_effect","arguments":{"key":"deploy","payload":{"blob":"` + big + `"}}}}`)
	s.wantError("2", -32600, "over the 4096-byte limit")
	s.send(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"guard_effect","arguments":{"key":"k","payload":{"blob":"` + big + `"}}},"id":"late"}`)
	s.wantError("null", -32600, "over the 4096-byte limit")
	s.send(`{"jsonrpc":"2.0","id":"three","method":"tools/call","params":{`)
	s.wantError(`"three"`, -32700, "parse error")
	s.send(`not json at all`)
	s.wantError("null", -32700, "parse error")
	s.send(`{"jsonrpc":"2.0","id":4,"method":"ping"} {"jsonrpc":"2.0","id":5,"method":"ping"}`)
	s.wantError("4", -32700, "not one JSON value")
	s.send(`{"hello":"world","id":6}`)
	s.wantError("6", -32600, "invalid request")
	s.send(`{"jsonrpc":"2.0","id":{"nested":7},"method":"ping"}`)
	s.wantError("null", -32600, "invalid request")
	s.send(`[{"jsonrpc":"2.0","id":8,"method":"ping"}]`)
	s.wantError("null", -32600, "batches are not accepted")
	s.send("")
	s.send(" \t\r")

	// The session is intact: a tool call, and a ping with trailing whitespace, are answered.
	s.send(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"checkpoint","arguments":{"label":"after"}}}` + "  \r")
	r := s.recv()
	var res mcp.CallToolResult
	if string(r.ID) != "9" || r.Error != nil || json.Unmarshal(r.Result, &res) != nil || res.IsError {
		t.Fatalf("checkpoint after the bad messages: id %s error %+v result %s", r.ID, r.Error, r.Result)
	}
	s.send(`{"jsonrpc":"2.0","id":10,"method":"ping"}`)
	if r := s.recv(); string(r.ID) != "10" || r.Error != nil {
		t.Fatalf("ping: %+v", r)
	}

	inW.Close()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, mcp.ErrConnectionClosed) {
			t.Errorf("Run after the input ended: %v", err)
		}
	case <-time.After(time.Minute): // a bound for a hung server, not a timing assertion
		t.Fatal("the server did not stop when its input ended")
	}
	if n := strings.Count(log.String(), "refused a message"); n != 8 {
		t.Errorf("%d refusals logged, want 8:\n%s", n, log.String())
	}
}

// syncWriter serialises writes to a strings.Builder (the transport logs from its own goroutine).
type syncWriter struct {
	b  *strings.Builder
	mu chan struct{}
}

func (w syncWriter) Write(p []byte) (int, error) {
	w.mu <- struct{}{}
	defer func() { <-w.mu }()
	return w.b.Write(p)
}
