package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/agent-rewind/rewind/cli/internal/agentws"
	"github.com/agent-rewind/rewind/cli/internal/hook"
	"github.com/agent-rewind/rewind/mcpserver"
	"github.com/alecthomas/kong"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCPCmd serves the MCP tools over stdio.
type MCPCmd struct {
	// No default here: an empty flag lets REWIND_MCP_PROFILE choose (mcpserver.ResolveProfile).
	Profile string `help:"Tool profile: lean, recovery, analytics or all (default: $REWIND_MCP_PROFILE, else all)." placeholder:"NAME"`
}

// Run serves until stdin closes. Every failure before serving (an unknown profile, a workspace
// that is not a folder) goes to stderr with exit status 1 and nothing on stdout, even with
// --json: stdout carries only the protocol.
func (c *MCPCmd) Run(env *Env) error {
	profile, err := mcpserver.ResolveProfile(c.Profile, os.Getenv)
	if err != nil {
		return mcpFailure(env, err)
	}
	// The workspace is chosen at the first tool call (mcpworkspace.go); a --workspace that
	// cannot be a workspace at all still stops the server before any protocol traffic.
	if dir := hook.ExplicitWorkspace(env.WorkspaceSet, env.WorkspaceFlag, env.Workspace); dir != "" {
		if _, err := agentws.New(dir, agentws.Options{}); err != nil {
			return mcpFailure(env, err)
		}
	}
	if why := hook.IgnoredWorkspaceFlag(env.WorkspaceSet, env.WorkspaceFlag); why != "" {
		fmt.Fprintln(env.Stderr, "agent-rewind mcp: "+why)
	}
	wd, _ := os.Getwd()
	ws := &mcpWorkspace{env: env, log: env.Stderr, wd: wd}
	defer ws.Close()
	srv, err := mcpserver.New(ws, mcpserver.Options{Profile: string(profile), Version: mcpVersion()})
	if err != nil {
		return mcpFailure(env, err)
	}
	srv.AddReceivingMiddleware(withSession)
	mcpTerminalNotice(env, wd)
	if err := srv.Run(context.Background(), mcpTransport(env)); err != nil && !errors.Is(err, mcp.ErrConnectionClosed) && !errors.Is(err, io.EOF) {
		return mcpFailure(env, fmt.Errorf("serving MCP over stdio: %w", err))
	}
	return nil
}

// mcpTransport is the Env's stdin and stdout (the process's, or other streams when Main runs
// in-process); a message the server refuses is reported on stderr.
func mcpTransport(env *Env) mcp.Transport {
	return &mcpserver.StdioTransport{In: env.Stdin, Out: env.Stdout, Log: env.Stderr}
}

// mcpFailure reports err on stderr and exits 1, whatever --json says.
func mcpFailure(env *Env, err error) error {
	fmt.Fprintf(env.Stderr, "agent-rewind mcp: %v\n", err)
	return &ExitError{Code: 1, Err: err, Silent: true}
}

// mcpVersion is the version reported on initialize, as "agent-rewind version" prints it.
func mcpVersion() string { return hook.Release() }

// mcpUsageError handles a command-line error in "agent-rewind mcp ...": an MCP client starts the
// server, so the error goes to stderr with exit status 1 (kong's usage error status and its
// usage text on stdout would look like protocol to the client). It reports whether err was one.
func mcpUsageError(err error, stderr io.Writer) bool {
	var pe *kong.ParseError
	if !errors.As(err, &pe) || pe.Context == nil {
		return false
	}
	for _, p := range pe.Context.Path {
		if p.Command != nil && p.Command.Name == "mcp" {
			fmt.Fprintf(stderr, "agent-rewind mcp: %v (see agent-rewind mcp --help)\n", err)
			return true
		}
	}
	return false
}
