package mcpserver_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/mcpserver"
	"github.com/agent-rewind/rewind/mcpserver/internal/fakeworkspace"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// testNow is the pinned clock of the servers under test: an hour after the fake's epoch.
var testNow = fakeworkspace.Epoch.Add(time.Hour)

// connect serves ws with profile over the SDK's in-memory transports and returns the SDK's own
// client session on it, closed when the test ends.
func connect(t testing.TB, ws mcpserver.Workspace, profile mcpserver.Profile) *mcp.ClientSession {
	t.Helper()
	srv, err := mcpserver.New(ws, mcpserver.Options{Profile: string(profile), Version: "test", Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatalf("New(%s): %v", profile, err)
	}
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatalf("server Connect: %v", err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "mcpserver-test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatalf("client Connect: %v", err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

// call calls tool with args and returns the result, failing the test on a protocol error.
func call(t testing.TB, cs *mcp.ClientSession, tool string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("call %s(%v): protocol error: %v", tool, args, err)
	}
	return res
}

// callOK calls tool, requires a successful result, and decodes its structured content into out.
// It returns the text form.
func callOK(t testing.TB, cs *mcp.ClientSession, tool string, args any, out any) string {
	t.Helper()
	res := call(t, cs, tool, args)
	text := resultText(t, res)
	if res.IsError {
		t.Fatalf("call %s(%v): tool error: %s", tool, args, text)
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatalf("call %s: structured content: %v", tool, err)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("call %s: decoding structured content %s: %v", tool, raw, err)
	}
	return text
}

// callErr calls tool, requires a tool error (isError), and returns its text.
func callErr(t testing.TB, cs *mcp.ClientSession, tool string, args any) string {
	t.Helper()
	res := call(t, cs, tool, args)
	text := resultText(t, res)
	if !res.IsError {
		t.Fatalf("call %s(%v): want a tool error, got success: %s", tool, args, text)
	}
	if res.StructuredContent != nil {
		t.Errorf("call %s: a tool error carries structured content %v", tool, res.StructuredContent)
	}
	return text
}

// resultText is the text of the result's single text content.
func resultText(t testing.TB, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("result has %d content items, want 1 text: %+v", len(res.Content), res.Content)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("result content is %T, want text", res.Content[0])
	}
	return tc.Text
}

// toolNames lists the tools through cs.
func toolNames(t testing.TB, cs *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		names = append(names, tool.Name)
	}
	return names
}

func mustContain(t testing.TB, what, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("%s does not contain %q:\n%s", what, w, text)
		}
	}
}
