package command

import (
	"fmt"
	"os"
)

// mcpTerminalNotice tells a person who typed "agent-rewind mcp" in a terminal what the silent
// process is: an MCP server waiting for a client on stdin, which folder it protects, and how to
// leave. An MCP client starts the server with pipes, and gets nothing extra.
func mcpTerminalNotice(env *Env, root string) {
	if !stdinIsTerminal(env) {
		return
	}
	fmt.Fprintf(env.Stderr, "agent-rewind mcp: an MCP server protecting %s is waiting for an MCP client on stdin (JSON-RPC, one message a line).\n"+
		"To use it, add \"agent-rewind mcp\" to your agent's MCP servers (see the README, MCP server). To leave, press Ctrl-D or Ctrl-C.\n", root)
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
