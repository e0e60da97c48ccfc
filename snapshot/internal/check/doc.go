// Package check is the snapshot store's checker (restic's checker is the anchor): it verifies a
// whole store against its format, section by section (FORMAT.md, "Check"), and with Repair
// fixes what it can without losing anything.
//
// The sections, in order: checkpoints (metadata.go), manifests, packs and their indexes
// (contents.go, packindex.go), objects (contents.go; contents in chunks: chunked.go), the
// position, the stat cache (statcache.go), and leftovers of interrupted writes (leftovers.go).
// Repair first gives packs that lost their index file their index back: from the copy at the
// pack's end, or, for a pack written before packs carried one, by searching it for what the
// store names (salvage.go, wanted.go); it stores missing or damaged contents again from
// workspace files that still have them (repair.go), drops a stat cache that vouches wrongly, and
// moves leftovers aside to quarantine/.
//
// It reads objects and packs itself (internal/objects) and asks the snapshot layer above, through
// the small Store interface, for what only that layer knows: checkpoints' metadata, the
// position, manifests expanded from their trees, and hashes of live files.
package check
