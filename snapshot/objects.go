package snapshot

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// objectStore is the content-addressed blob store under StateDir/objects (FORMAT.md, "Objects").
type objectStore struct {
	dir string
}

// path returns the file name of object h: objects/ab/cdef….
func (o *objectStore) path(h Hash) string {
	s := h.String()
	return filepath.Join(o.dir, s[:2], s[2:])
}

func (o *objectStore) tmpDir() string { return filepath.Join(o.dir, "tmp") }

func (o *objectStore) has(h Hash) bool {
	_, err := os.Lstat(o.path(h))
	return err == nil
}

// open opens object h for reading, verifying its content as it is read (see verifyingReader).
func (o *objectStore) open(h Hash) (io.ReadCloser, error) {
	f, err := os.Open(o.path(h))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &CorruptError{Path: o.path(h), Reason: "object is missing (removed by hand, or by a gc that did not know a checkpoint still needed it)"}
		}
		return nil, err
	}
	return &verifyingReader{f: f, want: h, h: sha256.New(), name: o.path(h)}, nil
}

// verifyingReader hashes what it reads and fails at EOF when the content does not match its name,
// so a damaged object is never restored silently.
type verifyingReader struct {
	f    *os.File
	h    hash.Hash
	want Hash
	name string
}

func (v *verifyingReader) Read(p []byte) (int, error) {
	n, err := v.f.Read(p)
	v.h.Write(p[:n])
	if err == io.EOF {
		var got Hash
		v.h.Sum(got[:0])
		if got != v.want {
			return n, &CorruptError{Path: v.name, Reason: fmt.Sprintf("content hashes to %s", got)}
		}
	}
	return n, err
}

func (v *verifyingReader) Close() error { return v.f.Close() }

// cleanTmp removes what an interrupted writer left in objects/tmp. Call it under the lock.
func (o *objectStore) cleanTmp() error {
	if err := os.RemoveAll(o.tmpDir()); err != nil {
		return err
	}
	return os.MkdirAll(o.tmpDir(), 0o700)
}

// stager collects the new objects of one checkpoint in objects/tmp, then makes them durable and
// visible together (commit): see FORMAT.md for why two syncfs calls replace one fsync per file.
type stager struct {
	o        *objectStore
	mu       sync.Mutex
	pending  map[Hash]string // object -> its temporary file
	newBytes int64
}

func newStager(o *objectStore) *stager {
	return &stager{o: o, pending: make(map[Hash]string)}
}

// known reports whether h is stored or already staged.
func (s *stager) known(h Hash) bool {
	s.mu.Lock()
	_, ok := s.pending[h]
	s.mu.Unlock()
	return ok || s.o.has(h)
}

// putBytes stages data as object h unless it is already stored or staged.
func (s *stager) putBytes(h Hash, data []byte) error {
	if s.known(h) {
		return nil
	}
	f, err := os.CreateTemp(s.o.tmpDir(), "obj-*")
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	s.adopt(h, f.Name(), int64(len(data)))
	return nil
}

// tempFile returns a new staging file for content whose hash is not known yet (large files are
// hashed while they are copied); pass it to adopt or discard.
func (s *stager) tempFile() (*os.File, error) {
	return os.CreateTemp(s.o.tmpDir(), "obj-*")
}

// adopt registers the staged file tmp as object h; a duplicate is removed.
func (s *stager) adopt(h Hash, tmp string, size int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.pending[h]; ok || s.o.has(h) {
		os.Remove(tmp)
		return
	}
	s.pending[h] = tmp
	s.newBytes += size
}

// fewFiles is the batch size up to which files are flushed one by one (fsync each, then each
// directory) rather than with syncfs(2), which also waits for every other process's unwritten
// data on the file system: cheaper for the common small checkpoint or restore on a busy disk.
const fewFiles = 64

// commit makes every staged object durable, then visible under its name.
func (s *stager) commit() error {
	if len(s.pending) == 0 {
		return nil
	}
	var tmps []string
	for _, tmp := range s.pending {
		tmps = append(tmps, tmp)
	}
	if err := flush(s.o.dir, tmps, nil); err != nil {
		return fmt.Errorf("flush new objects: %w", err)
	}
	made := make(map[string]bool)
	var dirs []string
	for h, tmp := range s.pending {
		name := s.o.path(h)
		dir := filepath.Dir(name)
		if !made[dir] {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return err
			}
			made[dir] = true
			dirs = append(dirs, dir)
		}
		if err := os.Rename(tmp, name); err != nil {
			return fmt.Errorf("store object %s: %w", h, err)
		}
	}
	// The fan-out directories may be new: their entries in objects/ need flushing too.
	if err := flush(s.o.dir, nil, append(dirs, s.o.dir)); err != nil {
		return fmt.Errorf("flush new objects: %w", err)
	}
	s.pending = make(map[Hash]string)
	return nil
}

// flush makes files' contents and dirs' entries durable: fsync each when there are few, one
// syncfs(2) of the file system holding fs otherwise.
func flush(fs string, files, dirs []string) error {
	if len(files)+len(dirs) > fewFiles {
		return syncFS(fs)
	}
	for _, name := range append(files, dirs...) {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		err = f.Sync()
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}
