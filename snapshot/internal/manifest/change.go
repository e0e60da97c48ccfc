package manifest

import "strings"

// ChangeKind says how a path differs between two states.
type ChangeKind string

// The change kinds. A file whose content and mode both changed is ChangeModified (a restore
// applies both); ChangeMode is a permission change alone.
const (
	ChangeAdded    ChangeKind = "added"    // only in the newer state
	ChangeDeleted  ChangeKind = "deleted"  // only in the older state
	ChangeModified ChangeKind = "modified" // file content or symlink target
	ChangeMode     ChangeKind = "mode"     // permission bits only
	ChangeType     ChangeKind = "type"     // e.g. a file became a directory or a symlink
)

// Change is one path that differs. From is the entry in the older state (nil when added), To in
// the newer one (nil when deleted).
type Change struct {
	Path string     `json:"path"`
	Kind ChangeKind `json:"kind"`
	From *Entry     `json:"from,omitempty"`
	To   *Entry     `json:"to,omitempty"`
}

// Diff compares two entry lists sorted by path: the changes that make a into b, in path order.
// From and To point into a and b.
func Diff(a, b []Entry) []Change {
	var out []Change
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		var c int
		switch {
		case i == len(a):
			c = 1
		case j == len(b):
			c = -1
		default:
			c = strings.Compare(a[i].Path, b[j].Path)
		}
		switch {
		case c < 0:
			out = append(out, Change{Path: a[i].Path, Kind: ChangeDeleted, From: &a[i]})
			i++
		case c > 0:
			out = append(out, Change{Path: b[j].Path, Kind: ChangeAdded, To: &b[j]})
			j++
		default:
			if k, ok := compareEntry(&a[i], &b[j]); ok {
				out = append(out, Change{Path: a[i].Path, Kind: k, From: &a[i], To: &b[j]})
			}
			i++
			j++
		}
	}
	return out
}

// compareEntry classifies the difference between two entries of one path, if any.
func compareEntry(a, b *Entry) (ChangeKind, bool) {
	switch {
	case a.Type != b.Type:
		return ChangeType, true
	case a.Type == TypeSkipped:
		return "", false
	case a.Blob != b.Blob || a.Target != b.Target:
		return ChangeModified, true
	case !SameMode(a.Mode, b.Mode) && a.Type != TypeSymlink:
		return ChangeMode, true
	}
	return "", false
}

// SameMode reports whether the permission bits a and b are alike as far as this system keeps
// them (ModeBitsKept): on Windows, whose files have no executable bits, a file recorded 0755
// elsewhere and the same file restored there, which reads back 0644, are alike.
func SameMode(a, b uint32) bool { return (a^b)&ModeBitsKept == 0 }
