// Package snapshot checkpoints a whole workspace and restores it exactly: every file, directory
// (empty ones too), symlink (as a link, never followed) and permission bit, whatever changed them.
//
// # Store and format
//
// A Store lives in the workspace's state directory (default <root>/.rewind). Contents are stored
// once, named by their SHA-256 (objects/, or packs/ for the small files of a large batch such as a
// first checkpoint, which would otherwise spend most of its time creating files; a file over
// 4 MiB in content-defined chunks, listed in chunklists/ under the whole content's hash, so that
// a change inside a large file stores about the change); each checkpoint has a manifest (entries: path,
// type, mode, size, content hash, link target), stored as a tree of directory listings each named
// by its SHA-256, so that a checkpoint writes the listings of what changed only, and a metadata
// file named by the first 12 hex digits of its own SHA-256, which is the checkpoint id. A stat
// cache (index) lets a checkpoint skip reading files whose size, mtime, ctime, inode and mode did
// not change, with git's racy-clean rule. FORMAT.md specifies every file byte by byte.
//
// # Operations
//
//   - Checkpoint captures the workspace and makes it the current position.
//   - AutoCheckpoint is the checkpoint an agent's hook takes before a tool call: kind "auto",
//     labelled with the call, reusing the current position when nothing changed; the call is
//     noted in calls.jsonl either way, so Resolve finds "before tool call X" by the call's id.
//   - Rewind restores any checkpoint: it takes a safety checkpoint of the current state first
//     (or reuses the current position when nothing changed since it), touches only paths that
//     differ, never writes through a symlink or outside the workspace, and runs under a journal,
//     so an interrupted rewind is finished by the next Open (or the next writer).
//   - Replay is a Rewind that may only move forward: to a checkpoint recorded later than the
//     current position, such as the safety checkpoint of the rewind that led here.
//   - List returns the timeline (a tree through parent links); Diff compares two checkpoints or
//     a checkpoint and the live workspace; GC removes old checkpoints and unreferenced contents;
//     Maintain, when MaintenanceDue says so, merges small packs and applies the retention of
//     automatic checkpoints, taking the lock only when it is free (maintain.go); Check verifies
//     the whole store and with Repair fixes what it can without losing anything;
//     Resolve turns an id prefix, or a tool call id, into a checkpoint id.
//
// # What is captured
//
// Excluded, never captured and never touched by a restore: the state directory, and the paths
// named by .rewindignore at the root (gitignore syntax, see Ignore). The workspace's own .git is
// an ordinary folder and is captured. Sockets, FIFOs and devices are recorded as skipped entries,
// and a restore leaves skipped paths alone. A file that changes while it is read (its stat differs
// before and after, or, for a file changed within the last 100ms, a second read hashes
// differently) is read again up to three times, then recorded as skipped: a torn read is never
// stored. An unreadable file or directory fails the checkpoint with its path: make it readable
// or list it in .rewindignore; a path longer than the system allows can only be listed there
// (messages shorten such a path to its start and end).
//
// Not captured: owners, timestamps (restored files get the time of the restore, which is what
// build tools expect), extended attributes, ACLs, and hard links (each name is stored as its own
// file; a restore writes a new file, so a link to it elsewhere keeps the old content).
//
// # Concurrency and the chain
//
// Writers (Checkpoint, Rewind, Replay, GC) serialise on an flock of StateDir/lock, across
// processes and goroutines; the first write of each hold of the lock removes what an
// interrupted writer left, and gives a pack whose index file is missing its index back from the
// copy at the pack's end (no writer removes a pack a checkpoint may need; Check --repair
// rebuilds the index of an older pack without that copy); readers (List, Diff, Resolve, Get, Entries, and dry runs) take no
// lock, because every file is replaced by an atomic rename. A caller that holds StateDir/lock
// itself must say so with Options.Lock (flock conflicts between two descriptors of one process).
// Each writer records on the hash chain through Options.Recorder, after what it records is
// durable: kinds "checkpoint" (CheckpointRecord), "rewind" and "replay" (RestoreRecord). A failed
// Record leaves the durable result in place and returns an error wrapping ErrNotRecorded.
//
// # Platforms
//
// Linux (fstatat and syncfs on amd64 and arm64, portable fallbacks on other architectures) and
// macOS (path-based stat, sync(2)), in internal/platform; the tests run on Linux.
//
// # Layers
//
// This package is the Store and its operations (capture and checkpoint, diff, rewind and replay
// under the journal, restore of chosen paths, and, as thin orchestration over internal/upkeep
// and internal/check, gc, maintenance and check: which checkpoints are kept, the retention, the
// chain entry and the locks are decided here); beneath it, packages under internal/ that no one
// outside this module may import, each knowing only those below it (Go refuses import cycles,
// so the layers stay honest):
//
//   - internal/check: the checker, section by section, and check --repair (pack indexes rebuilt,
//     contents stored again from the workspace, leftovers moved aside, older packs salvaged);
//     it asks this package, through a small interface, for checkpoints, the position,
//     manifests and the hashes of live files.
//   - internal/upkeep: gc's sweep of what a Live set (the mark this package computes from the
//     kept checkpoints, plus the stat cache and chunk lists) does not keep, the rewriting and
//     merging of packs, and maintenance's due check and state file.
//   - internal/journal: the journal file of a restore in flight (recovering is this package's).
//   - internal/restore: the restore without the store: the plan (what differs, what is never
//     touched, a restore of chosen paths), the applier that changes only what the live capture
//     saw and writes through no symlink, the flush, and what the stat cache holds afterwards. It
//     reads contents through a Source it defines; the safety checkpoint, the journal, recovery
//     and the chain records stay here (rewind.go, restorepaths.go, journal.go). Its Kept, the
//     manifest package's Change and ChangeKind, and the errors ErrUnsafePath and ErrNoSuchPath
//     are named here too.
//   - internal/walk: the live walk in path order, with .rewindignore's rules (Ignore).
//   - internal/statcache: the stat cache (index and its log) that makes a checkpoint incremental.
//   - internal/manifest: entries, the manifest's encoding, and the same manifest as trees.
//   - internal/objects: content-addressed storage: loose objects, packs and their indexes,
//     chunked contents, batched durable writes (Stager), verified reads.
//   - internal/platform: stat, one-descriptor directory listing, the writers' lock, flushing,
//     file mapping; one file per system behind one small API.
//
// Beside them, internal/workspacetest holds what the module's tests share to build workspaces;
// only tests import it.
//
// Types that callers see (Hash, Entry, EntryType, Ignore, Journal, CorruptError, ManifestError,
// Due, CheckOptions, CheckReport, CheckSection, Problem) are defined there and named here as
// aliases, so that this package's API is unchanged.
package snapshot
