// Package snapshot checkpoints a whole workspace and restores it exactly: every file, directory
// (empty ones too), symlink (as a link, never followed) and permission bit, whatever changed them.
//
// A Store lives in the workspace's state directory (default <root>/.rewind). Contents are stored
// once, named by their SHA-256 (objects/); each checkpoint has a manifest (sorted entries: path,
// type, mode, size, content hash, link target), itself named by its SHA-256, and a small metadata
// file named by the first 12 hex digits of its own SHA-256, which is the checkpoint id. A stat
// cache (index) lets a checkpoint skip reading files whose size, mtime, ctime, inode and mode did
// not change, with git's racy-clean rule. FORMAT.md specifies every file.
//
// Operations:
//
//   - Checkpoint captures the workspace and makes it the current position.
//   - Rewind restores any checkpoint: it takes a safety checkpoint of the current state first,
//     touches only paths that differ, never writes through a symlink or outside the workspace,
//     and runs under a journal, so an interrupted rewind is finished by the next Open.
//   - Replay is a Rewind that may only move forward in time from the current position.
//   - List returns the timeline (a tree through parent links); Diff compares two checkpoints or
//     a checkpoint and the live workspace; GC removes old checkpoints and unreferenced contents.
//
// Excluded, never captured and never touched by a restore: the state directory, and the paths
// named by .rewindignore at the root (gitignore syntax, see Ignore). Sockets, FIFOs and devices
// are listed as skipped entries, and a restore leaves skipped paths alone.
//
// Writers (Checkpoint, Rewind, Replay, GC) serialise on an flock of StateDir/lock; readers (List,
// Diff, Resolve) take no lock, because every file is replaced by an atomic rename. Each writer
// records on the hash chain through the Recorder the caller passes, after its result is durable:
// kinds "checkpoint" (CheckpointRecord), "rewind" and "replay" (RestoreRecord).
package snapshot
