package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The effect tools log each call that ran, numbered; get_order logs nothing.
func TestShop(t *testing.T) {
	log := filepath.Join(t.TempDir(), "effects.jsonl")
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := newServer(log).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().Instructions; got != Instructions {
		t.Errorf("instructions %q", got)
	}
	for i, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"send_email", map[string]any{"to": "ann@example.com", "subject": "s", "body": "b"}, "email 1 sent to ann@example.com"},
		{"get_order", map[string]any{"order": "o-1"}, "order o-1: paid, not shipped"},
		{"create_refund", map[string]any{"order": "o-1", "cents": 500}, "refund 2 of 500 cents issued for order o-1"},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil || res.IsError {
			t.Fatalf("call %d %s: %v %+v", i, c.tool, err, res)
		}
		if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, c.want) {
			t.Errorf("%s: %q, want %q", c.tool, text, c.want)
		}
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"tool":"send_email"`) || !strings.Contains(lines[1], `"cents":500`) {
		t.Errorf("the effect log:\n%s", b)
	}
}

// An effect whose log cannot be written fails, naming the file.
func TestShopLogUnwritable(t *testing.T) {
	l := &effectLog{path: filepath.Join(t.TempDir(), "no-such-dir", "effects.jsonl")}
	if _, err := l.add("send_email", email{To: "a"}); err == nil || !strings.Contains(err.Error(), "no-such-dir") {
		t.Fatalf("err %v", err)
	}
}
