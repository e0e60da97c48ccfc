package workspace

import (
	"fmt"
	"os"
)

// Adopt makes the store id's history the workspace folder root's, continuing it there. For a
// folder deleted and made again at the same path, or moved across file systems (both are new
// folders to the registry), the store itself becomes root's. For a copy of a workspace whose
// folder still exists, two folders must never share a store: root gets a store of its own that
// begins as a copy of id's (fork.go). It refuses when root already has a store, unless that store
// was made by a command that offered id's history (Record.Offered): that store is then set aside
// as an orphan (gc --orphans lists it; nothing is removed). The store's anchor is keyed by its id
// and follows it.
func Adopt(root, id string) (*Workspace, error) {
	w, err := At(root)
	if err != nil {
		return nil, err
	}
	if !validID(id) {
		return nil, fmt.Errorf("%q is not a store id (16 hex digits, as \"agent-rewind gc --orphans --dry-run\" lists them)", id)
	}
	reg := registry{w.Base}
	unlock, err := reg.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	if cur, ok, err := reg.find(w.Identity); err != nil {
		return nil, err
	} else if ok {
		if cur.ID == id || cur.ForkedFrom == id {
			return w, w.use(cur)
		}
		if cur.Offered != id {
			return nil, fmt.Errorf("workspace %s already has store %s: adopt only into a folder that has no store yet, or the store the folder's first command offered (remove that one first with \"agent-rewind gc --orphans\" once its folder is gone, or adopt from a fresh folder)", w.Root, cur.ID)
		}
	}
	rec, err := reg.record(id)
	if err != nil {
		return nil, fmt.Errorf("store %s in %s: %w", id, w.Base, err)
	}
	if rec.Root == w.Root && rec.Identity.same(w.Identity) {
		return w, w.use(rec)
	}
	if live, _ := reg.alive(rec); live {
		frec, err := w.fork(reg, rec)
		if err != nil {
			return nil, err
		}
		return w, w.use(frec)
	}
	old := rec.Identity
	rec.Root, rec.Identity, rec.AdoptedFrom = w.Root, w.Identity, &old
	if err := writeRecord(reg.storeDir(id), rec); err != nil {
		return nil, err
	}
	if err := reg.bind(w.Identity, id); err != nil {
		return nil, err
	}
	if b, err := os.ReadFile(reg.keyFile(old)); err == nil && string(b) == id+"\n" {
		os.Remove(reg.keyFile(old))
	}
	return w, w.use(rec)
}
