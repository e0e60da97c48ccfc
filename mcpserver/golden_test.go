package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/mcpserver"
	"github.com/agent-rewind/rewind/mcpserver/internal/fakeworkspace"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var update = flag.Bool("update", false, "rewrite the server section of testdata/golden/*.txtar from the server's answers")

// TestGolden replays the client messages of each testdata/golden/*.txtar against a server on a
// fresh fake workspace and compares every message the server sends with the archive's server
// section, JSON line by JSON line. An archive holds:
//
//	-- profile --  the tool profile (one line)
//	-- auto --     optional: automatic checkpoints taken before the exchange, one a line:
//	               session, tool call id and label, separated by tabs
//	-- client --   JSON-RPC messages the client sends, in order
//	-- server --   JSON-RPC messages the server must send, in order (go test -update rewrites it)
//
// Each client call waits for its response before the next message is sent, so the exchange is
// deterministic; notifications get no response.
func TestGolden(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "golden", "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			runGolden(t, path)
		})
	}
}

func runGolden(t *testing.T, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	arch, err := parseArchive(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	profile, _ := arch.file("profile")
	clientText, ok := arch.file("client")
	if !ok {
		t.Fatalf("%s: no client section", path)
	}
	clientMsgs, err := decodeMessages(clientText)
	if err != nil {
		t.Fatalf("%s: client section: %v", path, err)
	}

	ws := fakeworkspace.New()
	auto, _ := arch.file("auto")
	for line := range strings.Lines(auto) {
		f := strings.Split(strings.TrimRight(line, "\n"), "\t")
		if len(f) != 3 {
			t.Fatalf("%s: auto line %q: want session, call id and label separated by tabs", path, line)
		}
		ws.AutoCheckpoint(f[0], f[1], f[2])
	}
	srv, err := mcpserver.New(ws, mcpserver.Options{
		Profile: strings.TrimSpace(profile), Version: "test",
		Now: func() time.Time { return testNow },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := ct.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []jsonrpc.Message
	for _, msg := range clientMsgs {
		if err := conn.Write(ctx, msg); err != nil {
			t.Fatalf("write %v: %v", msg, err)
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok || !req.IsCall() {
			continue
		}
		for {
			in, err := conn.Read(ctx)
			if err != nil {
				t.Fatalf("waiting for the response to %s: %v", req.Method, err)
			}
			got = append(got, in)
			if res, ok := in.(*jsonrpc.Response); ok && res.ID == req.ID {
				break
			}
		}
	}
	if err := conn.Close(); err != nil && !errors.Is(err, io.ErrClosedPipe) {
		t.Fatal(err)
	}
	ss.Wait()

	gotText, err := encodeMessages(got)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		arch.set("server", gotText)
		if err := os.WriteFile(path, arch.format(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	wantText, ok := arch.file("server")
	if !ok {
		t.Fatalf("%s: no server section: run go test -run Golden -update", path)
	}
	// Re-encode the expectation so only content, not layout, is compared.
	wantMsgs, err := decodeMessages(wantText)
	if err != nil {
		t.Fatalf("%s: server section: %v", path, err)
	}
	if wantText, err = encodeMessages(wantMsgs); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(strings.Split(wantText, "\n"), strings.Split(gotText, "\n")); diff != "" {
		t.Errorf("%s: server messages differ (-want +got); if the change is intended, run go test -run Golden -update:\n%s", path, diff)
	}
}

// decodeMessages reads a sequence of JSON-RPC messages, each any JSON layout.
func decodeMessages(text string) ([]jsonrpc.Message, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	var msgs []jsonrpc.Message
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		m, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}

// encodeMessages writes messages as tab-indented JSON, one after the other.
func encodeMessages(msgs []jsonrpc.Message) (string, error) {
	var b bytes.Buffer
	for _, m := range msgs {
		data, err := jsonrpc.EncodeMessage(m)
		if err != nil {
			return "", err
		}
		if err := json.Indent(&b, data, "", "\t"); err != nil {
			return "", err
		}
		b.WriteByte('\n')
	}
	return b.String(), nil
}
