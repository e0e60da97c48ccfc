package workspace

import (
	"fmt"
	"os"
)

// Adopt makes the store id the store of the workspace folder at root, continuing its history
// there: for a folder deleted and made again at the same path, or moved across file systems
// (both are new folders to the registry). It refuses when root already has a store, or when
// the store's own folder still exists at its recorded path (two folders must never share a
// store). The store's anchor is keyed by its id and follows it.
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
		if cur.ID == id {
			return w, w.use(cur)
		}
		return nil, fmt.Errorf("workspace %s already has store %s: adopt only into a folder that has no store yet (remove that one first with \"agent-rewind gc --orphans\" once its folder is gone, or adopt from a fresh folder)", w.Root, cur.ID)
	}
	rec, err := reg.record(id)
	if err != nil {
		return nil, fmt.Errorf("store %s in %s: %w", id, w.Base, err)
	}
	if live, _ := reg.alive(rec); live {
		return nil, fmt.Errorf("store %s belongs to the folder %s, which still exists: two folders cannot share a store; copy the folder instead, or pass --workspace %s", id, rec.Root, rec.Root)
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
