// Package workspace is the composition root's view of one workspace: the folder an agent works
// in, and the .rewind/ directory beside its files that holds every piece of durable state.
//
// Layout of .rewind/ (each module documents its own part):
//
//	format        the layout version, a decimal integer and a newline; a newer one is refused
//	lock          advisory lock (flock) that serialises writers across processes
//	chain.jsonl   the hash chain (hashchain/FORMAT.md)
//
// Nothing under .rewind/ is ever captured by a checkpoint or touched by a rewind.
package workspace
