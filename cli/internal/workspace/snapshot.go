package workspace

import (
	"github.com/agent-rewind/rewind/snapshot"
)

// Snapshots opens the workspace's checkpoint store (snapshot/FORMAT.md: objects/, packs/,
// manifests/, checkpoints/, index, position, journal, lock in the store), recording its
// checkpoints, rewinds and replays on the chain. Opening finishes an interrupted rewind first.
// progress, if not nil, receives progress reports of long operations.
func (w *Workspace) Snapshots(progress func(snapshot.Progress)) (*snapshot.Store, error) {
	return snapshot.Open(w.Root, snapshot.Options{StateDir: w.Meta, Recorder: w, Progress: progress})
}
