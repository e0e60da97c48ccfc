// Command fakeserver serves the agent-rewind MCP tools over stdio on a fake, in-memory
// workspace. Tests build it to drive the real stdio transport with clients written by others
// (the official TypeScript SDK). It resolves its profile as agent-rewind mcp does: -profile,
// then REWIND_MCP_PROFILE, then "all"; an unknown profile exits 1 before any protocol traffic.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/agent-rewind/rewind/mcpserver"
	"github.com/agent-rewind/rewind/mcpserver/internal/fakeworkspace"
)

func main() {
	profileFlag := flag.String("profile", "", "tool profile: lean, recovery, analytics or all")
	flag.Parse()
	if err := run(*profileFlag); err != nil {
		fmt.Fprintf(os.Stderr, "fakeserver: %v\n", err)
		os.Exit(1)
	}
}

func run(profileFlag string) error {
	profile, err := mcpserver.ResolveProfile(profileFlag, os.Getenv)
	if err != nil {
		return err
	}
	srv, err := mcpserver.New(fakeworkspace.New(), mcpserver.Options{Profile: string(profile), Version: "fake"})
	if err != nil {
		return err
	}
	return srv.Run(context.Background(), &mcpserver.StdioTransport{Log: os.Stderr})
}
