// Package prompts is the prompt log: each prompt a person gave an agent, as the agent's prompt
// hook reported it (Claude Code's and Codex CLI's UserPromptSubmit, Gemini CLI's BeforeAgent),
// so that the automatic checkpoints, taken before tool calls, can be grouped by the prompt
// that led to them ("Add a login page" → 7 tool calls), and a rewind can go back to before
// prompt N.
//
// The log is prompts.jsonl in the workspace's store, one JSON Prompt a line, appended and
// synced; a torn last line (a crash) is skipped by readers. The text is redacted as automatic
// checkpoints' labels are (docs/checkpoints.md, "Secrets in automatic checkpoints' labels")
// and cut to 200 bytes: nothing else of the conversation is kept but the path of the
// session's transcript the hook named (transcript_path), for the conversation rewind.
// Prompts are numbered from 1 in the order of the log, over every session of the workspace.
//
// gc prunes the log (Prune): a prompt whose automatic checkpoints are all gone goes, and the
// log is rewritten durably with each kept line's number (n), so prompt:N names the same
// prompt afterwards; a line without n (every appended one) is one more than the line before.
// prompts.lock beside it keeps appends (shared) and the rewrite (exclusive) apart.
package prompts
