package snapshot

import "github.com/agent-rewind/rewind/snapshot/internal/manifest"

// EntryType is the kind of a manifest entry, stored as one byte in the manifest.
type EntryType = manifest.EntryType

// The entry types. TypeSkipped marks a path that exists but was not captured (a socket, FIFO or
// device, or a file that kept changing while it was read): a restore leaves such a path alone.
const (
	TypeFile    = manifest.TypeFile
	TypeDir     = manifest.TypeDir
	TypeSymlink = manifest.TypeSymlink
	TypeSkipped = manifest.TypeSkipped
)

// Entry is one path of a checkpoint (a manifest line) or of the live workspace.
type Entry = manifest.Entry

// ManifestError reports a manifest that was refused, and where. It matches ErrBadManifest.
type ManifestError = manifest.ManifestError

// EncodeManifest returns the manifest bytes for entries, which must be sorted by path and valid
// (as ParseManifest would accept them). The encoding is canonical: ParseManifest(EncodeManifest(e))
// gives e back, and equal entry lists give equal bytes, so equal workspaces share one manifest.
func EncodeManifest(entries []Entry) []byte { return manifest.EncodeManifest(entries) }

// ParseManifest decodes and validates a manifest (FORMAT.md, "Manifests"). It refuses anything a
// restore could be tricked by: unsafe or unsorted paths, duplicates, a path under a non-directory.
// It never panics on any input.
func ParseManifest(data []byte) ([]Entry, error) { return manifest.ParseManifest(data) }
