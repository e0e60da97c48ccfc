// Package transcript forks an agent session's conversation to end just before one of its tool
// calls, in the client's own format and folder, so that resuming the fork gives the agent the
// context it had before that call, matching a rewind of the files to the automatic checkpoint
// taken before it (agent-rewind rewind ID --conversation).
//
// The original transcript is only read, never changed: the fork is a new session beside it,
// with a new session id, written with the user's permissions (0600, created exclusively,
// durably). Each supported client has a file of its own, which recognises the format of the
// pinned client versions from real sessions (tools/agents/testdata/transcripts) and refuses any
// other version rather than guess:
//
//	claude.go  Claude Code: <config>/projects/<folder>/<session>.jsonl; resume: claude --resume <id>
//	codex.go   Codex CLI:   <CODEX_HOME>/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl; codex resume <id>
//
// Plan reads and cuts without writing (a dry run shows it); Fork.Write writes it. Nothing of a
// transcript leaves it but the SHA-256 of the original and of the fork (Fork.OriginalSHA256,
// Fork.SHA256), which is what the caller records on the hash chain.
package transcript
