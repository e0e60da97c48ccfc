package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Orphan is a store whose workspace folder is gone.
type Orphan struct {
	Record
	Dir    string `json:"dir"`    // the store's folder
	Bytes  int64  `json:"bytes"`  // its size on disk
	Reason string `json:"reason"` // why it is an orphan
}

// alive reports whether rec's folder still exists at its recorded path with its identity, and
// the identity entry still names rec: otherwise, why not.
func (r registry) alive(rec Record) (bool, string) {
	b, err := os.ReadFile(r.keyFile(rec.Identity))
	if err != nil || strings.TrimSpace(string(b)) != rec.ID {
		return false, "another store took over its folder (store --adopt), or its creation was interrupted"
	}
	id, err := identityOf(rec.Root)
	if errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Sprintf("%s no longer exists (deleted, or moved and not opened since: opening it at its new path reattaches it)", rec.Root)
	}
	if err != nil {
		return true, "" // unreadable is not gone
	}
	if !id.same(rec.Identity) {
		return false, fmt.Sprintf("%s is now another folder (deleted and made again)", rec.Root)
	}
	return true, ""
}

// Orphans lists the stores in the state base whose workspace folder is gone: removed, replaced
// by a new folder at the same path, or moved and never opened at its new path. It changes
// nothing.
func Orphans() ([]Orphan, error) {
	base, err := TrustedStateBase()
	if err != nil {
		return nil, err
	}
	reg := registry{base}
	recs, bad, err := reg.all()
	if err != nil {
		return nil, fmt.Errorf("list the stores in %s: %w", base, err)
	}
	var out []Orphan
	for _, rec := range recs {
		if ok, why := reg.alive(rec); !ok {
			dir := reg.storeDir(rec.ID)
			out = append(out, Orphan{Record: rec, Dir: dir, Bytes: DirSize(dir), Reason: why})
		}
	}
	for id := range bad {
		dir := reg.storeDir(id)
		if _, rerr := os.Stat(filepath.Join(dir, RecordFile)); errors.Is(rerr, fs.ErrNotExist) {
			out = append(out, Orphan{Record: Record{ID: id}, Dir: dir, Bytes: DirSize(dir), Reason: "its creation was interrupted before it was described (no store.json)"})
		}
		// a damaged store.json is not an orphan: it is reported, never removed
	}
	return out, nil
}

// RemoveOrphan removes an orphan store, its anchor and its identity entry, after checking under
// the registry's lock that it is still an orphan.
func RemoveOrphan(o Orphan) error {
	base, err := TrustedStateBase()
	if err != nil {
		return err
	}
	reg := registry{base}
	unlock, err := reg.lock()
	if err != nil {
		return err
	}
	defer unlock()
	if o.Version != 0 {
		rec, err := reg.record(o.ID)
		if err != nil {
			return err
		}
		if ok, _ := reg.alive(rec); ok {
			return fmt.Errorf("store %s is in use again by %s: not removed", o.ID, rec.Root)
		}
		if b, err := os.ReadFile(reg.keyFile(rec.Identity)); err == nil && strings.TrimSpace(string(b)) == o.ID {
			os.Remove(reg.keyFile(rec.Identity))
		}
	}
	if err := os.RemoveAll(filepath.Dir(reg.anchor(o.ID))); err != nil {
		return err
	}
	return os.RemoveAll(reg.storeDir(o.ID))
}

// DirSize returns the bytes of the regular files under dir (0 when unreadable).
func DirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if st, err := d.Info(); err == nil {
				n += st.Size()
			}
		}
		return nil
	})
	return n
}
