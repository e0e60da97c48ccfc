package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"time"

	"github.com/agent-rewind/rewind/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// demoWorkspace implements Checkpoint; the embedded interface stands in for the other methods,
// which this example never calls.
type demoWorkspace struct{ mcpserver.Workspace }

func (demoWorkspace) Checkpoint(_ context.Context, label string) (mcpserver.CheckpointResult, error) {
	return mcpserver.CheckpointResult{
		ID: "a1b2c3d4e5f6", Label: label, Time: time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC),
		Workspace: "/home/dev/shop", Files: 120, Bytes: 3 << 20,
	}, nil
}

// ExampleNew serves the lean profile over a Workspace and calls checkpoint as an agent would.
// agent-rewind mcp runs the same server with srv.Run(ctx, &mcpserver.StdioTransport{}).
func ExampleNew() {
	ctx := context.Background()
	srv, err := mcpserver.New(demoWorkspace{}, mcpserver.Options{Profile: "lean", Version: "example"})
	if err != nil {
		log.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(ctx, st, nil); err != nil {
		log.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "checkpoint", Arguments: map[string]any{"label": "before refactor"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	structured, _ := json.Marshal(res.StructuredContent)
	fmt.Println(string(structured))
	// Output:
	// Checkpoint a1b2c3d4e5f6 "before refactor" of /home/dev/shop at 2026-03-04T05:06:07Z: 120 files, 3.0 MiB. Keep this id: rewind a1b2c3d4e5f6 restores this state.
	// {"bytes":3145728,"files":120,"id":"a1b2c3d4e5f6","label":"before refactor","next":"rewind a1b2c3d4e5f6 restores this state","skipped":0,"time":"2026-03-04T05:06:07Z","workspace":"/home/dev/shop"}
}

// ExampleResolveProfile shows the precedence agent-rewind mcp applies: the --profile flag, then
// REWIND_MCP_PROFILE, then all.
func ExampleResolveProfile() {
	env := func(string) string { return "lean" } // as if REWIND_MCP_PROFILE=lean
	p, _ := mcpserver.ResolveProfile("", env)
	fmt.Println(p, p.Tools())
	p, _ = mcpserver.ResolveProfile("recovery", env)
	fmt.Println(p, p.Tools())
	_, err := mcpserver.ResolveProfile("max", env)
	fmt.Println(err)
	// Output:
	// lean [checkpoint rewind guard_effect]
	// recovery [checkpoint rewind guard_effect list replay backtrack_candidates backtrack_commit]
	// --profile: unknown MCP profile "max": use one of lean, recovery, analytics, all
}
