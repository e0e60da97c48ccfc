// Package durable writes files so that what a caller is told was written survives a crash:
// through a temporary file in the same directory, fsync, rename, and an fsync of the directory,
// so that after a crash a name holds either its old content or all of the new.
//
// It is the one copy of this code for every module of the repository: the chain, the snapshot
// store, the effect ledger, the tape, the gateway and the cli all write through it.
//
// Temporary files are named ".tmp-<name>-<random>" in the target's directory (StageIn: in a
// folder the caller chooses); a crash can leave one behind, and the stores that check
// themselves recognise and remove them by that prefix.
package durable
