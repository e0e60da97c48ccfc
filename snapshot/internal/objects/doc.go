// Package objects is the snapshot store's content-addressed storage: every content and tree
// stored once under its SHA-256 (Hash), as a loose object (objects/ab/cdef…), in a pack with
// its index (packs/<id>.pack, .idx, and a copy of the index in the pack's trailer), or, for a
// file over ChunkedFile, as content-defined chunks listed in chunklists/ (FORMAT.md, "Objects",
// "Packs", "Chunked contents").
//
// New opens the store of a state directory. Store reads (Open verifies as it reads: every failure is a *CorruptError), Stager writes one
// batch of new objects and makes them durable and visible together (Commit), and Reader reads
// many small objects, such as a manifest's trees, keeping their packs open. It knows nothing of
// manifests, checkpoints or the workspace: the layers above decide what is kept, and
// internal/upkeep and internal/check, which remove and verify objects, work through the few
// listings it offers (Loose, PackIDs, ReadPackIdx, IndexlessPacks, Orphan, Leftovers) and its
// pack operations (NewPack, FinishPack, RemovePacks, WritePackIdx).
package objects
