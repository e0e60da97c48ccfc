package workspace

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzRecord: store.json and the identity entries are files a person may edit or damage; any
// content is refused with an error or read, never a panic, and a record read has its store's id.
func FuzzRecord(f *testing.F) {
	f.Add([]byte(`{"version":1,"id":"0123456789abcdef","root":"/w","identity":{"device":1,"inode":2,"birth":3},"created":"2026-01-01T00:00:00Z"}`), []byte("0123456789abcdef\n"))
	f.Add([]byte(`{"version":9,"id":"0123456789abcdef"}`), []byte("zz"))
	f.Add([]byte(`[]`), []byte(""))
	base := f.TempDir()
	reg := registry{base}
	const id = "0123456789abcdef"
	os.MkdirAll(reg.storeDir(id), 0o700)
	os.MkdirAll(filepath.Join(base, identitiesDir), 0o700)
	ident := Identity{Device: 1, Inode: 2, Birth: 3}
	f.Fuzz(func(t *testing.T, record, key []byte) {
		os.WriteFile(filepath.Join(reg.storeDir(id), RecordFile), record, 0o600)
		os.WriteFile(reg.keyFile(ident), key, 0o600)
		if rec, err := reg.record(id); err == nil && rec.ID != id {
			t.Fatalf("record of store %s has id %q", id, rec.ID)
		}
		if rec, ok, err := reg.find(ident); ok && (err != nil || rec.ID != id) {
			t.Fatalf("find: %+v, %v", rec, err)
		}
	})
}
