// Package workspace is the composition root's view of one workspace: the folder an agent works
// in, and its store, the folder that holds every piece of durable state. The store lives
// outside the workspace, in the state base (StateBase: --state-dir, $REWIND_STATE_DIR,
// $XDG_STATE_HOME/agent-rewind or the platform's per-user state folder), so that nothing an
// agent runs inside the workspace (git clean -fdx, rm -rf, git stash or reset) can erase the
// history or re-arm a spent effect. docs/store.md is the reference.
//
// A store is found by the workspace folder's Identity (device, inode, birth time), not its
// path: it is found again after every file inside the folder is deleted and after the folder
// is moved within its file system; a folder deleted and made again at the same path is a new
// workspace (Adopt continues the old history there when a person says so). The registry that
// maps identities to stores, and its layout, is in registry.go.
//
// Layout of one store (each module documents its own part):
//
//	format        the layout version (FormatVersion), a decimal integer and a newline; a newer one is
//	              refused, an older one read as it is and marked current
//	store.json    the store's Record: id, workspace path and identity, creation, migration
//	.gitignore    "*": git never stages the store, should it sit in a repository
//	chain.jsonl   the hash chain, with chain.tree and chain.lock beside it (hashchain/FORMAT.md);
//	              its anchor is outside the store, at <state base>/anchors/<id>/head
//	lock          the checkpoint store's writer lock (flock), and beside it objects/, packs/,
//	              manifests/, checkpoints/, index, position and journal (snapshot/FORMAT.md)
//	effects/      the effect ledger (barrier/doc.go); effects.json, the optional effect rules
//	intents/      notes of chain entries in flight (intent.go): written before a checkpoint or an
//	              effect admission commits, removed once its entry is on the chain; one left by a
//	              killed process makes the next writer record the entry late, its data marked
//	              "recorded_late": {"time": when it committed, "reason": …}
//	memory.jsonl  failure memory written by backtrack_commit (cli/internal/agentws/doc.go)
//	prompts.jsonl the prompt log, written by the prompt hooks (cli/internal/prompts/doc.go)
//	prompts.lock  its lock
//	savings.json  the gateway's replay-savings receipt (gateway/doc.go)
//	storage/      the gateway's encrypted tape databases, one folder per tenant (tape/doc.go)
//
// Nothing in the store is ever captured by a checkpoint or touched by a rewind. A store made
// by an earlier version at <root>/.rewind is moved into the state base by the first Open or
// Init (migrate.go), with one message on stderr.
package workspace
