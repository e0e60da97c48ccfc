// Package hook is the guard as agents' hooks run it, before and after every tool call: the
// effect decision (barrier), the automatic checkpoint before a call that can change files, the
// choice of the workspace from the hook input and the flags, and the notes said once.
//
// Both binaries run it: "agent-rewind guard" (cli/internal/command) and agent-rewind-hook
// (cli/cmd/agent-rewind-hook), which links this package and what it imports, and none of the
// MCP server, the gateway, PostgreSQL or the command-line library, so that a hook process costs
// little more than starting any Go program. Keep it so: cli/cmd/agent-rewind-hook's
// TestLinksNoHeavyPackage fails when a heavy package is linked.
package hook
