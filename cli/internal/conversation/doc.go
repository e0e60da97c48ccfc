// Package conversation is the conversation half of a rewind, shared by the CLI's
// `rewind ID --conversation` and the MCP rewind tool's conversation option: it resolves what
// the rewind names (a tool call id, the automatic checkpoint before one, or prompt:N) to the
// agent's tool call, plans the fork of that call's session (cli/internal/transcript) before
// anything changes, and once the files are rewound writes the fork and records it on the
// chain (a "conversation" entry: Entry).
package conversation
