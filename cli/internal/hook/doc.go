// Package hook is the guard as agents' hooks run it, before and after every tool call: the
// effect decision (barrier), the automatic checkpoint before a call that can change files, the
// choice of the workspace from the hook input and the flags, and the notes said once.
//
// agent-rewind runs it for "agent-rewind guard" (cli/internal/command), and its guard server
// ("agent-rewind hook-server", cli/internal/hookserver) runs it for agent-rewind-hook, the thin
// client agents' hooks start (cli/cmd/agent-rewind-hook). A server runs many calls at once, for
// different workspaces, so nothing of a call is read from the process: Call carries its working
// directory, and Guard its input and output.
package hook
