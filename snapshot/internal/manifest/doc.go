// Package manifest is what a checkpoint holds, as bytes: the entries (Entry: path, type, mode,
// size, content hash, link target), their canonical manifest encoding (EncodeManifest,
// ParseManifest, which refuses anything a restore could be tricked by), and the same manifest
// as a tree of directory listings each named by its SHA-256 (EncodeTrees, ParseTree,
// ExpandTree), so that a checkpoint writes the listings of what changed only (FORMAT.md,
// "Manifests"), and how two entry lists differ (Diff, Change). It reads trees through a
// TreeSource and stores nothing itself.
package manifest
