package manifest

import (
	"fmt"

	"github.com/agent-rewind/rewind/snapshot/internal/objects"
)

// EntryType is the kind of a manifest entry, stored as one byte in the manifest.
type EntryType byte

// The entry types. TypeSkipped marks a path that exists but was not captured (a socket, FIFO or
// device, or a file that kept changing while it was read): a restore leaves such a path alone.
const (
	TypeFile    EntryType = 'f'
	TypeDir     EntryType = 'd'
	TypeSymlink EntryType = 'l'
	TypeSkipped EntryType = 'x'
)

// String returns "file", "dir", "symlink" or "skipped".
func (t EntryType) String() string {
	switch t {
	case TypeFile:
		return "file"
	case TypeDir:
		return "dir"
	case TypeSymlink:
		return "symlink"
	case TypeSkipped:
		return "skipped"
	}
	return fmt.Sprintf("type(%q)", byte(t))
}

// MarshalText encodes t as its String form.
func (t EntryType) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText decodes the String form.
func (t *EntryType) UnmarshalText(b []byte) error {
	for _, c := range []EntryType{TypeFile, TypeDir, TypeSymlink, TypeSkipped} {
		if c.String() == string(b) {
			*t = c
			return nil
		}
	}
	return fmt.Errorf("unknown entry type %q (want file, dir, symlink or skipped)", b)
}

// Entry is one path of a checkpoint (a manifest line) or of the live workspace.
type Entry struct {
	Path   string       `json:"path"`             // slash-separated, relative to the workspace root
	Type   EntryType    `json:"type"`             // file, dir, symlink or skipped
	Mode   uint32       `json:"mode"`             // permission bits, 07777 mask (0 for skipped)
	Size   int64        `json:"size"`             // file size; target length for a symlink; else 0
	Blob   objects.Hash `json:"blob,omitzero"`    // content hash, files only
	Target string       `json:"target,omitempty"` // symlink target text, symlinks only
	Reason string       `json:"reason,omitempty"` // why a skipped entry was not captured
}
