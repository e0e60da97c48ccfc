package command

import (
	"context"
	"fmt"
	"os"

	"github.com/agent-rewind/rewind/cli/internal/hook"
)

// mcpTerminalNotice tells a person who typed "agent-rewind mcp" in a terminal what the silent
// process is: an MCP server waiting for a client on stdin, which folder it protects, and how to
// leave. An MCP client starts the server with pipes, and gets nothing extra.
func mcpTerminalNotice(env *Env, wd string) {
	if !stdinIsTerminal(env) {
		return
	}
	// No client is connected yet, so no roots: the folder as the other rules choose it.
	what := "an MCP server"
	if src, err := mcpSources(context.Background(), env, wd); err == nil {
		if c, err := hook.Choose(src, mcpHint); err == nil {
			what = fmt.Sprintf("an MCP server protecting %s (chosen by %s)", c.Root, c.Why())
		} else {
			what = fmt.Sprintf("an MCP server with no workspace yet (%v)", err)
		}
	}
	fmt.Fprintf(env.Stderr, "agent-rewind mcp: %s is waiting for an MCP client on stdin (JSON-RPC, one message a line).\n"+
		"To use it, add \"agent-rewind mcp\" to your agent's MCP servers (see docs/mcp.md). To leave, press Ctrl-D or Ctrl-C.\n", what)
}

// stdinIsTerminal reports whether the Env's stdin is a terminal: a character device other than
// the null device.
func stdinIsTerminal(env *Env) bool {
	f, ok := env.Stdin.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(st, null)
}
