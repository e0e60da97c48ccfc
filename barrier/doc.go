// Package barrier is agent-rewind's effect barrier: a rewind undoes the workspace, never the
// world, so the first time an external effect (a push, a payment, an email) fires under a
// stable key it is admitted and recorded, and firing that key again is refused, with a reason
// the agent can act on, and the refusal is recorded too.
//
// It has four parts, each usable alone:
//
//   - ParseHookInput reads what a guard is given: the explicit form, or the hook input of
//     Claude Code, Codex CLI, Cursor, Cline, Windsurf, VS Code, GitHub Copilot or Gemini CLI.
//     What the guard knows of each client (its events, tools, MCP naming, call id, environment,
//     answers) is a Client, one file per client (Clients).
//   - Rules (DefaultRules, LoadRules) classify a tool call as an effect or not and derive its key
//     and payload. This is pure and cheap: it runs before every tool call. See RULES.md.
//   - Ledger admits, refuses, confirms, fails and releases keys, durably and atomically across
//     processes, recording every decision through a Recorder (the CLI's adapter over the hash
//     chain).
//   - Respond turns a decision into the answer each agent's hook protocol expects.
//
// Guard ties them together for `agent-rewind guard`: Guard.Handle(input) → Outcome.Answer.
//
// # Decisions
//
//	key state          same payload                    other payload
//	(no record)        admitted                        admitted
//	released           admitted (new generation)       admitted (new generation)
//	pending            refused "pending"               refused "payload_mismatch"
//	spent              refused "spent"                 refused "payload_mismatch"
//	failed             refused "failed"                refused "payload_mismatch"
//
// An admission is pending when the caller can confirm it later (agent hooks that give the
// model's tool call id and report after the call: Claude Code, Codex, VS Code, Cursor's
// preToolUse, Cline's CLI), and spent at once otherwise (the MCP guard_effect tool, the explicit
// CLI form, Cursor's before*Execution, Cline's extension, Windsurf, Copilot and Gemini CLI,
// whose hooks carry no call id). Then:
//
//	PostToolUse         pending → spent     ("confirm" entry)
//	PostToolUseFailure  pending → failed    ("failure" entry); refused until released
//	PermissionDenied    pending → released  ("release" entry); the call never ran
//	Ledger.Release      any → released      ("release" entry); a person's action, with a reason
//
// Nothing expires with time: a rewind can come much later than any network retry. A pending key
// stays refused ("outcome unknown, reconcile first") until a person releases it. A second
// PreToolUse for the same tool call (two hooks configured on one call) is admitted as a
// duplicate without being recorded again.
//
// # Guard input (wire format)
//
// One JSON object, as the argument of `agent-rewind guard` or on its stdin, at most
// MaxInputSize bytes:
//
//   - Explicit: {"key": "...", "payload": <any JSON>, "description": "..."}. No other members.
//   - Claude Code and Codex CLI hooks (Codex adds turn_id and model): session_id,
//     transcript_path, cwd, permission_mode, hook_event_name, tool_name, tool_input, tool_use_id;
//     tool_response (PostToolUse); error and is_interrupt (PostToolUseFailure); reason
//     (PermissionDenied). PreToolUse is decided; PostToolUse, PostToolUseFailure and
//     PermissionDenied are reports; any other event is parsed and not handled.
//   - Cursor hooks (recognised by conversation_id, cursor_version or a camelCase event name):
//     beforeShellExecution {command, cwd} (read as its Shell tool) and beforeMCPExecution
//     {tool_name, tool_input (a JSON string or an object), url or command} are decided (spent at
//     once); preToolUse {tool_name,
//     tool_input, tool_use_id} is decided for any tool, postToolUse and postToolUseFailure are
//     reports by tool_use_id. A tool_name "MCP:<tool>" or "MCP:<server>:<tool>" is read as the
//     MCP tool <tool>. workspace_roots names the project.
//   - VS Code's Local harness (recognised by hookEventName): Claude Code's tool fields with
//     camelCase common fields (sessionId, hookEventName); PreToolUse and PostToolUse.
//   - GitHub Copilot hooks (.github/hooks, events configured in PascalCase; recognised by a
//     timestamp without a transcript_path): Claude Code's shape and tool names
//     (Bash, Write, Edit), tool_result after the call, no call id; MCP tools <server>-<tool>.
//   - Gemini CLI hooks: Claude Code's shape with hook_event_name BeforeTool (decided, spent at
//     once: there is no call id; one per call, so Client.NameCall names it for an automatic
//     checkpoint), AfterTool (a report with nothing left to do) and BeforeAgent (a prompt,
//     RolePrompt); shell calls are
//     tool run_shell_command, MCP tools mcp_<server>_<tool> with mcp_context {server_name,
//     tool_name} (read as mcp__<server>__<tool>).
//   - Cline hooks (recognised by hookName). Its CLI: {hookName: "tool_call", tool_call: {id,
//     name, input}} (decided, pending: id is the call's) and {hookName: "tool_result",
//     tool_result: {id, name, input, output, error}} (confirms, or fails with an error); shell
//     calls are run_commands {commands: [...]}, MCP tools <server>__<tool>. Its VS Code
//     extension: {clineVersion, hookName, timestamp, taskId, workspaceRoots, userId,
//     preToolUse|postToolUse: {toolName, parameters}}; PreToolUse is decided (spent at once);
//     execute_command's parameters.command is the shell command; use_mcp_tool {server_name,
//     tool_name, arguments (a JSON string)} is read as the MCP tool mcp__<server_name>__<tool_name>
//     with those arguments.
//   - Windsurf hooks (recognised by agent_action_name): {agent_action_name, trajectory_id,
//     execution_id, timestamp, tool_info}. pre_run_command {command_line, cwd} is read as the
//     shell tool run_command, pre_mcp_tool_use {mcp_server_name, mcp_tool_name,
//     mcp_tool_arguments} as mcp__<server>__<tool>; both decided, spent at once; post_* are
//     reports with nothing left to do.
//
// Input.Folder is the project the input names: the workspace root holding the working directory
// (Cursor's workspace_roots, Cline's workspaceRoots), else cwd (tool_info.cwd for Windsurf).
// Anything else is an *InputError (wrapping ErrUnknownInput) whose message names every client
// and event the guard reads (KnownInputs). testdata/hooks holds a fixture of each shape, and
// testdata/hooks/SOURCES.md says where each shape comes from.
//
// # Answers
//
//	agent / event                                   admitted or not an effect       refused
//	Claude Code, Codex: PreToolUse                  exit 0, no output               exit 2, reason on stderr, stdout empty
//	VS Code, Copilot: PreToolUse                    exit 0, no output               exit 0, {"hookSpecificOutput":{..."deny", "permissionDecisionReason"}}
//	Windsurf: pre_run_command, pre_mcp_tool_use     exit 0, no output               exit 2, reason on stderr
//	Gemini CLI: BeforeTool                          exit 0, {}                      exit 2, reason on stderr
//	the above: reports, other events                exit 0, no output ({} Gemini)   (reports are never refused)
//	Cursor: before*Execution, preToolUse            exit 0, {"permission":"allow"}  exit 0, {"permission":"deny","user_message","agent_message"}
//	Cursor: other events                            exit 0, {}
//	Cline CLI: tool_call of run_commands            exit 0, {"cancel":false}        exit 0, {"cancel":false,"overrideInput":{"commands":[prints the reason, exit 2]}}
//	Cline: any other event                          exit 0, {"cancel":false}        exit 0, {"cancel":true,"errorMessage"} (stops the task, or the CLI's run)
//	explicit form                                   exit 0 (the CLI prints)         exit 2, reason on stderr
//	input that does not parse, deciding or unknown  -                               its client's refusal; exit 2, the error on stderr when the client is unknown
//	input that does not parse, a report             exit 1, the error on stderr
//
// Only exit code 2 blocks a Claude Code or Codex tool call; exit 1 and other codes are
// non-blocking errors the user sees, and a hook that times out lets the call run. So an error
// while deciding an effect (a bad rules file, a ledger or chain that cannot be written) is
// answered as a refusal (fail closed) with the error as the reason; an error in a report is
// exit 1. The guard never prints "allow" to Claude Code or Codex: that would skip the user's own
// permission prompt.
//
// Known limits of the agents' hooks: Claude Code fires PermissionDenied only for auto-mode
// denials, so a call the user denies at the permission prompt leaves its key pending (refused as
// outcome unknown until released; the reason says so). Codex fires PostToolUse for Bash even
// when the command exits non-zero, so such a call is confirmed as spent. Cursor admissions are
// spent at once, so a call the user then declines in Cursor's own prompt still spends its key.
//
// # Ledger format (on disk)
//
// The ledger is a directory given by the caller; agent-rewind uses effects/ in the workspace's
// store (outside the workspace), which no checkpoint captures and no rewind touches:
//
//	effects/
//	  lock                       flock(2): admissions and transitions hold it exclusively
//	  keys/<hex sha256(key)>.json      one record per key, the current generation
//	  tooluse/<hex sha256(id)>.json    {"tool_use_id": "...", "key": "..."} while a call is pending
//	  keys/.tmp-*, tooluse/.tmp-*      temporary files; left by a crash, ignored
//
// Each is a regular file: anything else there (a FIFO, a symlink, ...) fails the read at once,
// naming it, and a guard deciding an effect then refuses it rather than wait.
//
// A record is a JSON object (Record): format (1), key, fingerprint ("sha256:<hex>"), state
// (pending, spent, failed, released), first_seen (RFC 3339, UTC), tool_use_id, checkpoint (the
// one current at admission, as the caller names it), seq (the chain seq of the admission; -1 (Unrecorded) if
// it never reached the chain), description, source, rule, generation (1, +1 per re-admission
// after a release), and history: every Transition of every generation (at, from, to, seq,
// reason, by, tool_use_id). The payload itself is not kept, only its fingerprint: payloads may
// hold secrets.
//
// Atomicity and durability:
//
//   - A new key is admitted under the exclusive lock by writing the record to a temporary file,
//     fsyncing it, and link(2)ing it to its name, then fsyncing the directory: the name appears
//     complete or not at all, and EEXIST settles any race. The tool-call index is written first
//     (temporary file, fsync, rename, fsync the directory). Then the "effect" entry is recorded
//     and its seq written into the record (temporary file, fsync, rename, fsync). Only then is
//     the lock released and does the guard answer.
//   - A record that exists and is not released is refused without the exclusive lock: an
//     unlocked read sees whole files only. A record with seq -1 may be an admission in flight, so
//     the reader first takes the lock shared, which waits for it; the chain then always shows an
//     admission before the refusals that cite it.
//   - Transitions (confirm, fail, release) take the exclusive lock, record the chain entry, then
//     replace the record (temporary file, fsync, rename, fsync the directory): a state changes
//     only once it is recorded, and each transition carries its entry's seq.
//   - If recording an admission fails, the record is removed (or the released record restored)
//     and the call is refused. A process killed after the record is durable leaves the key
//     pending (or spent): the next guard refuses it, which is the safe side.
//
// # Fingerprints
//
// A payload's fingerprint is "sha256:" and the lowercase hex SHA-256 of its canonical JSON
// (Canonical): no insignificant whitespace, object members sorted by name, repeated names
// rejected, minimal string escapes, integers kept exactly, other numbers in shortest
// round-trip form. The same JSON value written two ways has one fingerprint.
//
// # Chain entries
//
// Every decision is recorded through Recorder.Record(kind, data), with kind and data:
//
//	"effect"   EffectEntry   key, fingerprint, state, generation, tool_use_id, checkpoint, description, rule, source
//	"confirm"  ConfirmEntry  key, tool_use_id, admission_seq, by
//	"failure"  FailureEntry  key, tool_use_id, admission_seq, error, interrupt, by
//	"refusal"  RefusalEntry  key, code, state, fingerprint, admission_seq, tool_use_id, checkpoint, source, reason
//	"release"  ReleaseEntry  key, from, admission_seq, tool_use_id, reason, by
//
// An admission is written to the ledger first and recorded after; when the Recorder is an
// Intender, its entry is noted before the write, so that a process killed in between leaves a
// note from which the next writer records the admission late (the CLI marks such an entry's data
// "recorded_late"). The record keeps seq -1 (Unrecorded) then. Transitions are recorded before
// they are written and need no note.
//
// # Performance
//
// The path taken before every tool call that is not an effect parses the input, classifies it
// and answers, with no file opened when the workspace has no rules file (one small file read
// otherwise). Built-in rules are word matchers over the normalised command, not regular
// expressions, so nothing is compiled at start-up. See bench_test.go.
package barrier
