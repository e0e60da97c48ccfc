// Package workspace is the composition root's view of one workspace: the folder an agent works
// in, and the .rewind/ directory beside its files that holds every piece of durable state.
//
// Layout of .rewind/ (each module documents its own part):
//
//	format        the layout version, a decimal integer and a newline; a newer one is refused
//	chain.jsonl   the hash chain, with chain.tree and chain.lock beside it (hashchain/FORMAT.md)
//	lock          the checkpoint store's writer lock (flock), and beside it objects/, packs/,
//	              manifests/, checkpoints/, index, position and journal (snapshot/FORMAT.md)
//	effects/      the effect ledger (barrier/doc.go); effects.json, the optional effect rules
//	intents/      notes of chain entries in flight (intent.go): written before a checkpoint or an
//	              effect admission commits, removed once its entry is on the chain; one left by a
//	              killed process makes the next writer record the entry late, its data marked
//	              "recorded_late": {"time": when it committed, "reason": …}
//	memory.jsonl  failure memory written by backtrack_commit (cli/internal/agentws/doc.go)
//	savings.json  the gateway's replay-savings receipt (gateway/doc.go)
//	storage/      the gateway's encrypted tape databases, one folder per tenant (tape/doc.go)
//
// Nothing under .rewind/ is ever captured by a checkpoint or touched by a rewind.
package workspace
