// Package agentws is the workspace the MCP server (agent-rewind mcp) acts on: it implements
// mcpserver.Workspace over the real modules of one workspace, and it keeps failure memory.
//
//	tool                  backed by
//	checkpoint            snapshot.Store.Checkpoint (recorded on the chain as "checkpoint")
//	list                  snapshot.Store.List, newest first
//	rewind, replay        snapshot.Store.Rewind / Replay ("rewind" / "replay" entries)
//	guard_effect          barrier.Ledger.Admit, source "mcp", not confirmable (spent at once),
//	                      with the current checkpoint ("effect" / "refusal" entries)
//	savings               savings.json in the store, the gateway's receipt (see Savings)
//	backtrack_candidates  the timeline ranked by RankCandidates, with CountChanges and notes
//	backtrack_commit      Memory.Add ("memory" entry), then a rewind
//
// No store is created until a call writes (and never in the workspace: the store lives in the
// state base, cli/internal/workspace): list, backtrack_candidates and savings on a folder
// without a store answer with nothing, and rewind, replay and
// backtrack_commit there fail as unknown checkpoints. The checkpoint store and the effect
// ledger are opened per call (cheap, and every call sees what other processes did meanwhile);
// the hash chain is opened by the first entry and held until Close, appending under its own
// lock after catching up with other writers.
//
// Errors keep the modules' messages. An unknown or ambiguous checkpoint id matches
// mcpserver.ErrUnknownCheckpoint and snapshot.ErrNotFound or ErrAmbiguous. An operation that
// is durable but could not be recorded on the chain (snapshot.ErrNotRecorded) is an error that
// names what was done. mcpserver.ErrBusy is never returned: every lock here waits.
//
// # Failure memory (on disk)
//
// memory.jsonl in the store holds one note per line, each line one JSON object and a newline:
//
//	{"format":1,"time":"2026-01-02T03:04:05.123456789Z","checkpoint":"0123456789ab",
//	 "what_failed":"…","lesson":"…","seq":17}
//
// format is 1 (a larger one is refused: upgrade agent-rewind); time is RFC 3339 UTC;
// checkpoint is a full checkpoint id (12 lowercase hex digits); what_failed is not empty;
// lesson may be empty; seq is the hash chain entry (kind "memory", data MemoryEntry:
// checkpoint, what_failed, lesson, time) that records the same note. No other members; a line
// is at most MaxNoteLine bytes. The store is never captured or restored, so notes survive every
// rewind.
//
// Add holds an exclusive flock(2) on memory.jsonl while it records the chain entry first, then
// appends the line with one O_APPEND write and fsyncs it (the file's creation fsyncs the
// directory). A crash after the entry and before the fsync leaves the note on the chain only,
// and the call reported no success. A crash mid-write can leave a torn last line, bytes
// without their newline: the next reader or writer, under the lock, saves them durably as
// memory.torn-<offset>-<first 12 hex digits of their SHA-256>, records a
// "memory_recover" entry (TornTail: file, offset, bytes, sha256, saved_as), cuts them off, and
// logs that on stderr; they are reported and kept, never dropped silently. A complete line that
// does not parse is a *MemoryError: failure memory then refuses to read or add until a person
// moves the file aside.
//
// # Backtrack candidates
//
// backtrack_candidates considers every checkpoint, the current position and safety
// checkpoints included, ordered by RankCandidates: checkpoints taken on request before safety
// ones, then fewer failure notes first, then newer first, then by id. Each candidate's changed
// count compares its manifest with the current position's (CountChanges: manifest to manifest,
// no walk of the live tree), each distinct manifest read once.
package agentws
