package mcpserver_test

import (
	"fmt"
	"testing"

	"github.com/agent-rewind/rewind/mcpserver"
	"github.com/agent-rewind/rewind/mcpserver/internal/fakeworkspace"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The benchmarks measure mcpserver's cost per call over the SDK's in-memory transport on the
// fake workspace. BenchmarkPing is the floor: one JSON-RPC round trip through the same SDK and
// transport with no tool at all, so the ratio of a tool call to it is mcpserver's own share
// (validation, schemas, text form) plus the SDK's tool machinery.

func BenchmarkPing(b *testing.B) {
	cs := connect(b, fakeworkspace.New(), mcpserver.ProfileAll)
	for b.Loop() {
		if err := cs.Ping(b.Context(), nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCheckpoint(b *testing.B) {
	cs := connect(b, fakeworkspace.New(), mcpserver.ProfileAll)
	args := map[string]any{"label": "bench"}
	for b.Loop() {
		res, err := cs.CallTool(b.Context(), &mcp.CallToolParams{Name: "checkpoint", Arguments: args})
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

func BenchmarkGuardEffect(b *testing.B) {
	cs := connect(b, fakeworkspace.New(), mcpserver.ProfileAll)
	i := 0
	for b.Loop() {
		i++
		res, err := cs.CallTool(b.Context(), &mcp.CallToolParams{Name: "guard_effect", Arguments: map[string]any{"key": fmt.Sprint("bench:", i), "payload": map[string]any{"n": i}}})
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

func BenchmarkListTools(b *testing.B) {
	cs := connect(b, fakeworkspace.New(), mcpserver.ProfileAll)
	for b.Loop() {
		if _, err := cs.ListTools(b.Context(), nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNew is the startup cost: deriving and checking every schema of the all profile.
func BenchmarkNew(b *testing.B) {
	ws := fakeworkspace.New()
	for b.Loop() {
		if _, err := mcpserver.New(ws, mcpserver.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
