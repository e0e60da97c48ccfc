package objects

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ReadAll reads object h whole, verified against its hash (a tree, a chunk list's chunk).
func (o *Store) ReadAll(h Hash) ([]byte, error) {
	r, err := o.Open(h)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// Reader reads many small objects whole, such as the trees of one manifest. Trees are packed,
// so it reads them from the pack files it keeps open until Close: a manifest of thousands of
// folders opens each pack once, not once per tree. An object with a loose copy (read before a
// packed one, see Store.open), or one it cannot find or open, goes through ReadAll, which says
// what is wrong.
type Reader struct {
	o     *Store
	files map[string]*os.File
}

// NewReader returns a Reader of o's objects; Close it when done.
func NewReader(o *Store) *Reader {
	return &Reader{o: o, files: map[string]*os.File{}}
}

// Read returns object h whole, verified against its hash.
func (r *Reader) Read(h Hash) ([]byte, error) {
	if _, err := os.Lstat(r.o.Path(h)); !errors.Is(err, fs.ErrNotExist) {
		return r.o.ReadAll(h)
	}
	loc, ok, err := r.o.Packed(h)
	if err != nil || !ok {
		return r.o.ReadAll(h)
	}
	f := r.files[loc.Pack]
	if f == nil {
		if f, err = openRead(r.o, loc.Pack); err != nil {
			return r.o.ReadAll(h)
		}
		r.files[loc.Pack] = f
	}
	name := fmt.Sprintf("%s (object %s at offset %d)", loc.Pack, h, loc.Off)
	b := make([]byte, loc.Size)
	err = r.o.check(loc.Pack)
	if err == nil {
		_, err = f.ReadAt(b, loc.Off)
	}
	if err != nil {
		return nil, &CorruptError{Path: name, Reason: fmt.Sprintf("cannot be read: %v", Bare(err))}
	}
	if got := Hash(sha256.Sum256(b)); got != h {
		return nil, &CorruptError{Path: name, Reason: fmt.Sprintf("content hashes to %s", got)}
	}
	return b, nil
}

// Close closes the pack files read.
func (r *Reader) Close() {
	for _, f := range r.files {
		f.Close()
	}
}
