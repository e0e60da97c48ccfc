// Package mcpserver is agent-rewind's MCP tool surface: the eight tools an agent calls over stdio
// (agent-rewind mcp) to checkpoint and rewind its whole workspace, guard external effects and
// learn from its own failures. It is built on github.com/modelcontextprotocol/go-sdk and serves a
// [Workspace], an interface defined here and implemented by the cli module over the real
// workspace (snapshot, barrier, hash chain, failure memory); mcpserver imports no sibling module.
//
// # Wire format
//
// The server speaks MCP over JSON-RPC 2.0 on stdio, one JSON message a line of at most
// [DefaultMaxMessageSize] (16 MiB) bytes ([StdioTransport]). A line over the limit, one that is
// not JSON, not a JSON-RPC message, or a batch is answered with a JSON-RPC error (-32600, or
// -32700 for JSON that does not parse) carrying the line's id when it can be read, else null,
// and the session goes on.
// It advertises the tools capability only, and sends instructions on initialize ([Instructions])
// that teach the workflow in a few lines, naming only the tools the profile exposes.
//
// The tools, their inputs (JSON objects; unknown arguments are rejected) and outputs:
//
//	tool                  input                                   output (structuredContent)
//	checkpoint            {label?}                                [CheckpointResult]
//	list                  {limit?, before?}                       [ListResult]
//	rewind                {id}                                    [RestoreResult]
//	replay                {id}                                    [RestoreResult]
//	guard_effect          {key, payload?: object, description?}   [GuardResult]
//	savings               {}                                      [SavingsResult]
//	backtrack_candidates  {}                                      [CandidatesResult]
//	backtrack_commit      {id, what_failed, lesson?}              [BacktrackResult]
//
// What the model reads is the structured result: Claude Code and Codex CLI hand it
// structuredContent (Codex as the JSON after "Output:") and drop the text, so the structured
// result carries everything an agent needs: the ids, the tool calls (list's sessions: each agent
// session's calls, newest first, with their labels and the checkpoint before each), and the next
// step as a short "next" field (checkpoint: "rewind ID restores this state"; rewind and replay:
// "rewind SAFETY undoes this"; guard_effect: "perform it once now" or "do NOT perform it";
// list: how to go back and how to page). backtrack_candidates, backtrack_commit and savings
// need no next: the instructions give their step, and backtrack_commit's rewind has its own.
// The results are bounded ([MaxListEntries], [MaxListCalls], [MaxPaths], ...).
//
// Field names are snake_case. Every output property is always present and never null: lists are
// [] when empty, and times are RFC 3339 strings. Each result also carries a short text form as
// its content, for clients that show text: the same facts, leading with what the agent must know
// (the id to keep, REFUSED, the safety checkpoint that undoes a rewind), and the same next step.
// Output schemas carry no descriptions: what a field means reaches the model in next and in the
// values themselves, and a description would cost context on every turn.
//
// Schemas are derived from the Go types (github.com/google/jsonschema-go, the jsonschema struct
// tag being a property's description), then made portable: every node has exactly one "type"
// string (never the ["null","array"] union jsonschema-go writes for slices), no bare boolean
// schemas, no $ref. The MCP Inspector's schema lint (mcp-inspector --cli --method tools/list
// --strict, Inspector 2.12.0) finds nothing to report on any profile, warnings included. Output
// schemas list every property as "required", at every level (each is always present), and omit
// "additionalProperties", so that a newer server's added field does not fail an older client.
//
// Inputs are validated before the Workspace sees them, against the limits in validate.go
// ([MaxIDLen], [MaxLabelLen], [MaxKeyLen], ...); a violation is a tool error naming the argument,
// the value and what a valid one looks like. Outputs are capped so one call cannot flood the
// context: [MaxPaths] changed paths, [MaxListEntries] timeline entries, [MaxCandidates]
// candidates with [MaxCandidateNotes] notes each, [MaxCommitNotes] notes; a truncated flag (or
// the newest-kept rule for notes) says so.
//
// # Profiles and the context budget
//
// Every tool definition sits in the model's context on every turn, so the surface is chosen by a
// [Profile]: lean (checkpoint, rewind, guard_effect), recovery (lean plus list, replay,
// backtrack_candidates, backtrack_commit), analytics (savings) and all (the default). A tool a
// profile hides is not listed, and a call to it is a JSON-RPC error (invalid params) naming the
// profiles that have it. [ResolveProfile] applies the precedence: --profile flag, then
// REWIND_MCP_PROFILE, then all; an unknown name fails [New] before any protocol traffic.
//
// [MeasureBudget] measures a profile's cost as the earlier product did: the serialized tool
// definitions (name, description, input and output schema) plus the instructions, in characters
// divided by four, rounded up. Tests hold lean to 600 and all to 1,600. Clients such as Claude
// Code and Codex defer MCP tools behind a tool search (ToolSearch, tool_search): the model sees
// the instructions (in the system prompt) and finds the tools by name and description, so those
// say what each tool is for in the words an agent searches with (snapshot, undo, restore).
//
// # Errors and refusals
//
// A failure is a tool error (isError true) whose text says what failed and what to do: an input
// out of bounds ([InputError]), or an error from the Workspace, wrapped in a [ToolError] whose
// hint fits the error ([ErrUnknownCheckpoint]: where ids come from; [ErrBusy]: wait and retry;
// otherwise: fix the named cause and call again).
//
// A guard refusal is not a tool error. guard_effect returns a normal result with admitted false,
// the barrier's code and reason, and a text that starts "REFUSED ... do NOT perform". The reason:
// isError tells an agent its call failed and invites it to fix the call and try again, or to
// reach the goal another way; for a refusal that is exactly wrong, since the barrier worked and
// the effect already happened. A successful call whose answer is "no" is read as an answer, it
// is recorded on the chain like an admission, and an agent that branches on admitted gets a
// field it can test instead of parsing error text. A refusal is the barrier doing its job; only
// a barrier that cannot decide (the ledger unreadable, say) is a tool error.
//
// # Annotations
//
// rewind, replay and backtrack_commit are destructive (they overwrite and delete files; rewind
// and replay are idempotent: restoring the same checkpoint twice leaves the same files).
// list, backtrack_candidates and savings are read-only. checkpoint and guard_effect are additive
// and not idempotent (each checkpoint mints an id; a second guard on a key is refused). No tool
// is open-world: each acts only on the workspace and its .rewind/ state, and guard_effect gates
// an external effect without performing it, so a client need not treat calling it as reaching
// the outside world.
package mcpserver
