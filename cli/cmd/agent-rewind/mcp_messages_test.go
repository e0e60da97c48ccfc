package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// mcpPipe is "agent-rewind mcp" driven line by line over its stdin and stdout pipes.
type mcpPipe struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *syncBuf
}

func startMCPPipe(t *testing.T, dir string) *mcpPipe {
	t.Helper()
	cmd := exec.Command(bin, "mcp")
	cmd.Dir = dir
	cmd.Env = mcpEnv()
	p := &mcpPipe{t: t, cmd: cmd, stderr: &syncBuf{}}
	cmd.Stderr = p.stderr
	var err error
	if p.in, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.out = bufio.NewReader(out)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() }) // a bound for a hung child, not a timing assertion
	t.Cleanup(func() { timer.Stop(); p.in.Close(); cmd.Wait() })
	return p
}

func (p *mcpPipe) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatalf("write to agent-rewind mcp: %v\nstderr:\n%s", err, p.stderr)
	}
}

// reply is one JSON-RPC response read from the server.
type reply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (p *mcpPipe) recv() reply {
	p.t.Helper()
	line, err := p.out.ReadBytes('\n')
	if err != nil {
		p.t.Fatalf("read from agent-rewind mcp: %v\nstderr:\n%s", err, p.stderr)
	}
	var r reply
	if err := json.Unmarshal(line, &r); err != nil {
		p.t.Fatalf("agent-rewind mcp wrote %q: %v", line, err)
	}
	return r
}

// TestMCPSurvivesBadMessages: a 17 MiB guard_effect call (over the 16 MiB message limit) and a
// message that is not JSON each get a JSON-RPC error with their id, are reported on stderr and
// reach nothing (the effect's key is still unspent); the session goes on, and its next
// guard_effect call is admitted. It used to end the session.
func TestMCPSurvivesBadMessages(t *testing.T) {
	dir := t.TempDir()
	p := startMCPPipe(t, dir)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}`)
	if r := p.recv(); r.Error != nil || string(r.ID) != "1" {
		t.Fatalf("initialize: %+v", r)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	guard := func(id, payload string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"guard_effect","arguments":{"key":"deploy-prod","payload":{"blob":"` + payload + `"}}}}`
	}
	p.send(guard("2", strings.Repeat("x", 17<<20)))
	if r := p.recv(); string(r.ID) != "2" || r.Error == nil || r.Error.Code != -32600 || !strings.Contains(r.Error.Message, "over the 16777216-byte limit") {
		t.Fatalf("17 MiB message: %+v", r)
	}
	p.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"checkpoint"`)
	if r := p.recv(); string(r.ID) != "3" || r.Error == nil || r.Error.Code != -32700 {
		t.Fatalf("malformed message: %+v", r)
	}

	p.send(guard("4", "v1"))
	r := p.recv()
	var res struct {
		IsError           bool `json:"isError"`
		StructuredContent struct {
			Admitted bool   `json:"admitted"`
			Code     string `json:"code"`
		} `json:"structuredContent"`
	}
	if string(r.ID) != "4" || r.Error != nil || json.Unmarshal(r.Result, &res) != nil || res.IsError || !res.StructuredContent.Admitted {
		t.Fatalf("guard_effect after the bad messages: id %s error %+v result %s\nstderr:\n%s", r.ID, r.Error, r.Result, p.stderr)
	}

	p.in.Close()
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("agent-rewind mcp did not exit cleanly when stdin closed: %v\nstderr:\n%s", err, p.stderr)
	}
	if n := strings.Count(p.stderr.String(), "refused a message"); n != 2 {
		t.Errorf("%d refusals on stderr, want 2:\n%s", n, p.stderr)
	}
}
