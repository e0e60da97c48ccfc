// Package upkeep keeps a snapshot store small: the sweep of garbage collection, the rewriting of
// packs, and the bookkeeping of maintenance (FORMAT.md, "GC" and "Maintenance"). It works on
// the object store and the state directory alone: which checkpoints are kept (the retention)
// and what their manifests name is the snapshot layer's to decide, which hands the result over
// as a Live set (restic's prune works the same way from its checker's and its index's sets).
//
//   - Live: the mark. The snapshot layer adds the manifests and objects of the kept checkpoints;
//     MarkStatCache and MarkChunks add what the stat cache and the chunk lists need.
//   - Sweep: removes what Live does not keep, in an order that leaves a crashed sweep only files
//     nothing refers to: temporary files, manifests, chunk lists, loose objects, then packed
//     objects (SweepPacks), whose packs are rewritten with the objects kept (Repack).
//   - Maintenance: DueOf (what is due, cheaply), MergeBatch (the next small packs to merge in
//     one hold of the lock), and the state file (ReadState, WriteState).
//
// The caller holds the store's writers' lock for a sweep and a merge; nothing here takes it.
package upkeep
