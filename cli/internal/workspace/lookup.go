package workspace

import (
	"os"
	"path/filepath"
)

// HasStore reports whether the workspace folder root has a store: one in the state base, or a
// legacy .rewind/ folder that Open will move there. It reads and creates nothing else: one
// statx(2) and at most two small files.
func HasStore(root string) bool {
	w, err := At(root)
	if err != nil {
		return false
	}
	return w.hasStore()
}

// Probe is HasStore for a caller that may go on to open the workspace: w (nil when root is not
// a folder) keeps the store's record the lookup read, so that w.OpenStore does not read the
// identity file and store.json again.
func Probe(root string) (w *Workspace, has bool) {
	w, err := At(root)
	if err != nil {
		return nil, false
	}
	return w, w.hasStore()
}

// FindStore is Probe for a workspace At already returned, so that its folder is not resolved
// again: it reports whether the workspace has a store, and keeps the record for OpenStore.
func (w *Workspace) FindStore() bool { return w.hasStore() }

// OpenStore is Open, or with create Init, of a workspace At or Probe returned.
func (w *Workspace) OpenStore(create bool) error { return w.open(create) }

func (w *Workspace) hasStore() bool {
	if within(w.Base, w.Root) {
		return false
	}
	if rec, ok, err := (registry{w.Base}).find(w.Identity); ok && err == nil {
		w.found = &rec
		return true
	}
	st, err := os.Lstat(w.legacyDir())
	return err == nil && st.IsDir()
}

// Lookup returns the nearest folder at or above dir that has a store (HasStore): the workspace
// a command started in dir belongs to. ok is false when no enclosing folder has one.
func Lookup(dir string) (root string, ok bool) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", false
	}
	if resolved, err := filepath.EvalSymlinks(abs); err == nil {
		abs = resolved
	}
	base, _ := StateBase()
	for {
		if st, err := os.Stat(abs); err == nil && st.IsDir() {
			if w, err := At(abs); err == nil && w.hasStore() {
				return abs, true
			}
		}
		parent := filepath.Dir(abs)
		if parent == abs || (base != "" && abs == base) {
			return "", false
		}
		abs = parent
	}
}
