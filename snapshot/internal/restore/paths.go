package restore

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
)

// SelectPaths returns the live and wanted entries a restore of paths compares: each path and
// everything under it, plus the live folders on their way (unchanged, so never touched) or,
// where the workspace lacks one, the checkpoint's (created). A path in neither state, or a live
// non-folder where a folder must be, is refused before anything is written (strict; recovery
// is not, as an interrupted run may have deleted a path). id names the checkpoint in errors.
func SelectPaths(live, want []manifest.Entry, paths []string, id string, strict bool) ([]manifest.Entry, []manifest.Entry, error) {
	chosen := chooser(paths)
	var l, w []manifest.Entry
	for _, e := range live {
		if chosen(e.Path) {
			l = append(l, e)
		}
	}
	for _, e := range want {
		if chosen(e.Path) {
			w = append(w, e)
		}
	}
	seen := map[string]bool{}
	for _, p := range paths {
		if strict && find(live, p) == nil && find(want, p) == nil {
			return nil, nil, noSuchPath(live, want, p, id)
		}
		for i := 0; i < len(p); i++ {
			if p[i] != '/' || seen[p[:i]] || chosen(p[:i]) {
				continue
			}
			d := p[:i]
			seen[d] = true
			switch le, te := find(live, d), find(want, d); {
			case le != nil && le.Type == manifest.TypeDir:
				l, w = append(l, *le), append(w, *le)
			case le != nil:
				return nil, nil, fmt.Errorf("%w: %s is a %s in the workspace, where restoring %s needs a folder: restore %s itself, or move it away", ErrUnsafePath, d, le.Type, p, d)
			case te != nil:
				w = append(w, *te)
			}
		}
	}
	byPath := func(a, b manifest.Entry) int { return strings.Compare(a.Path, b.Path) }
	slices.SortFunc(l, byPath)
	slices.SortFunc(w, byPath)
	return l, w, nil
}

// chooser returns whether a path is one of paths or under one. A temporary file beside a chosen
// path is one a killed run was writing (the applier's writeFile): it goes with the chosen paths.
func chooser(paths []string) func(p string) bool {
	return func(p string) bool {
		for _, q := range paths {
			if p == q || strings.HasPrefix(p, q+"/") {
				return true
			}
		}
		if dir, name := path.Split(p); strings.HasPrefix(name, TempPrefix) {
			return slices.ContainsFunc(paths, func(q string) bool { d, _ := path.Split(q); return d == dir })
		}
		return false
	}
}

// noSuchPath is the error of a path p asked for that neither state has: why, when a folder on
// its way is no folder in one of them.
func noSuchPath(live, want []manifest.Entry, p, id string) error {
	for i := 0; i < len(p); i++ { // a path below a symlink or a file is nobody's path
		if p[i] != '/' {
			continue
		}
		d := p[:i]
		if e := find(live, d); e != nil && e.Type != manifest.TypeDir {
			return ThroughError(p, d, e.Type, "the workspace")
		}
		if e := find(want, d); e != nil && e.Type != manifest.TypeDir {
			return ThroughError(p, d, e.Type, "checkpoint "+id)
		}
	}
	return fmt.Errorf("%w: %q is neither in checkpoint %s nor in the workspace (paths are relative to the workspace root; see agent-rewind diff %s)", ErrNoSuchPath, p, id, id)
}

// find returns the entry of path p in es (sorted by path), or nil.
func find(es []manifest.Entry, p string) *manifest.Entry {
	i, ok := slices.BinarySearchFunc(es, p, func(e manifest.Entry, p string) int { return strings.Compare(e.Path, p) })
	if !ok {
		return nil
	}
	return &es[i]
}

// ThroughError is the ErrUnsafePath of a path p asked for below d, which is no folder but a t in
// where (the workspace, a checkpoint): no checkpoint holds a path below a symlink or a file.
func ThroughError(p, d string, t manifest.EntryType, where string) error {
	what := "a " + t.String()
	if t == manifest.TypeSkipped {
		what = "a path not captured (a socket, FIFO or device)"
	}
	return fmt.Errorf("%w: %q passes through %s, %s in %s: a checkpoint records %s itself, never what is under it; name %s", ErrUnsafePath, p, d, what, where, d, d)
}
