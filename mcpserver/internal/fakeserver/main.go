// Command fakeserver serves the agent-rewind MCP tools over stdio on a fake, in-memory
// workspace. Tests build it to drive the real stdio transport with clients written by others
// (the official TypeScript SDK). It resolves its profile as agent-rewind mcp does: -profile,
// then REWIND_MCP_PROFILE, then "all"; an unknown profile exits 1 before any protocol traffic.
// Each -auto SESSION:CALL:LABEL takes an automatic checkpoint before serving, as an agent's hook
// would have before that tool call.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/agent-rewind/rewind/mcpserver"
	"github.com/agent-rewind/rewind/mcpserver/internal/fakeworkspace"
)

func main() {
	profileFlag := flag.String("profile", "", "tool profile: lean, recovery, analytics or all")
	ws := fakeworkspace.New()
	flag.Func("auto", "an automatic checkpoint before serving, SESSION:CALL:LABEL (repeatable)", func(v string) error {
		f := strings.SplitN(v, ":", 3)
		if len(f) != 3 {
			return fmt.Errorf("%q: want SESSION:CALL:LABEL", v)
		}
		ws.AutoCheckpoint(f[0], f[1], f[2])
		return nil
	})
	flag.Parse()
	if err := run(ws, *profileFlag); err != nil {
		fmt.Fprintf(os.Stderr, "fakeserver: %v\n", err)
		os.Exit(1)
	}
}

func run(ws *fakeworkspace.Workspace, profileFlag string) error {
	profile, err := mcpserver.ResolveProfile(profileFlag, os.Getenv)
	if err != nil {
		return err
	}
	srv, err := mcpserver.New(ws, mcpserver.Options{Profile: string(profile), Version: "fake"})
	if err != nil {
		return err
	}
	return srv.Run(context.Background(), &mcpserver.StdioTransport{Log: os.Stderr})
}
