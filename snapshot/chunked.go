package snapshot

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/agent-rewind/rewind/internal/durable"
)

// Chunked contents (FORMAT.md, "Chunked contents"): a file larger than chunkedFile is stored as
// chunks, each an ordinary object, and a chunk list chunklists/<hash of the whole content> that
// names them in order. The whole content's hash stays what trees, the stat cache and diffs use.

var chunkBufPool = sync.Pool{New: func() any { b := make([]byte, 2*maxChunk); return &b }}

// listPath returns the file name of the chunk list of content h.
func (o *objectStore) listPath(h Hash) string {
	return filepath.Join(filepath.Dir(o.dir), "chunklists", h.String())
}

// putChunks reads r to its end, cutting it into chunks that it stages as objects and hashing
// every byte into whole; it returns the chunks and how many bytes it read.
func (s *stager) putChunks(r io.Reader, whole io.Writer) ([]chunkRef, int64, error) {
	bp := chunkBufPool.Get().(*[]byte)
	defer chunkBufPool.Put(bp)
	c := newChunker(r, whole, *bp)
	var chunks []chunkRef
	for {
		b, err := c.next()
		if err == io.EOF {
			return chunks, c.n, nil
		}
		if err != nil {
			return nil, c.n, err
		}
		h := Hash(sha256.Sum256(b))
		if err := s.putChunk(h, b); err != nil {
			return nil, c.n, err
		}
		chunks = append(chunks, chunkRef{h, int64(len(b))})
	}
}

// putList stages the chunk list of content h, unless h is stored or staged already (in chunks,
// or whole by a version that did not chunk). Only contents over chunkedFile have lists, so only
// here is a list looked for: other objects pay no extra lstat.
func (s *stager) putList(h Hash, chunks []chunkRef) error {
	s.mu.Lock()
	known, err := s.knownLocked(h)
	s.mu.Unlock()
	if err != nil || known || s.o.hasList(h) {
		return err
	}
	data := encodeChunkList(chunks)
	f, err := os.CreateTemp(s.o.tmpDir(), "list-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.lists[h]; dup || err != nil {
		os.Remove(f.Name())
		return err
	}
	if s.lists == nil {
		s.lists = make(map[Hash]string)
	}
	s.lists[h] = f.Name()
	s.newBytes += int64(len(data))
	return nil
}

// commitLists makes the staged chunk lists durable, then visible. commit calls it once every
// object is: a chunk list that exists names only stored chunks.
func (s *stager) commitLists() error {
	if len(s.lists) == 0 {
		return nil
	}
	var tmps []string
	for _, tmp := range s.lists {
		tmps = append(tmps, tmp)
	}
	if err := fsyncAll(tmps, func(name string) (*os.File, error) { return os.Open(name) }); err != nil {
		return fmt.Errorf("flush new chunk lists: %w", err)
	}
	dir := filepath.Dir(s.o.listPath(Hash{}))
	_, err := os.Lstat(dir)
	created := errors.Is(err, fs.ErrNotExist)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for h, tmp := range s.lists {
		if err := os.Rename(tmp, s.o.listPath(h)); err != nil {
			return fmt.Errorf("store chunk list %s: %w", h, err)
		}
		delete(s.lists, h)
	}
	if created {
		if err := durable.SyncDir(filepath.Dir(dir)); err != nil {
			return err
		}
	}
	return durable.SyncDir(dir)
}

// discardLists removes the staged chunk lists; s.mu is held.
func (s *stager) discardLists() {
	for h, tmp := range s.lists {
		os.Remove(tmp)
		delete(s.lists, h)
	}
}

// hasList reports whether content h is stored in chunks.
func (o *objectStore) hasList(h Hash) bool {
	_, err := os.Lstat(o.listPath(h))
	return err == nil
}

// readChunkList reads and parses the chunk list of content h; a missing list is fs.ErrNotExist,
// any other failure a *CorruptError.
func (o *objectStore) readChunkList(h Hash) ([]chunkRef, int64, error) {
	name := o.listPath(h)
	f, err := openRead(o, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, err
	}
	if err != nil {
		return nil, 0, &CorruptError{Path: name, Reason: fmt.Sprintf("cannot be opened: %v", bare(err))}
	}
	defer f.Close()
	b, err := io.ReadAll(faultReader{f, o, name})
	if err != nil {
		return nil, 0, &CorruptError{Path: name, Reason: fmt.Sprintf("cannot be read: %v", bare(err))}
	}
	chunks, size, err := parseChunkList(b)
	if err != nil {
		return nil, 0, &CorruptError{Path: name, Reason: fmt.Sprintf("chunk list is damaged: %v", err)}
	}
	return chunks, size, nil
}

// openChunked opens content h from its chunks, verifying each chunk and, at the end, the whole;
// ok is false when h has no chunk list.
func (o *objectStore) openChunked(h Hash) (r io.ReadCloser, ok bool, err error) {
	chunks, _, err := o.readChunkList(h)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, true, err
	}
	name := o.listPath(h)
	return &verifyingReader{r: &chunkReader{o: o, chunks: chunks}, want: h, h: sha256.New(), name: name}, true, nil
}

// chunkReader reads the chunks of a list one after the other, each verified as it is read.
type chunkReader struct {
	o      *objectStore
	chunks []chunkRef
	cur    io.ReadCloser
	n      int64 // bytes read of the current chunk
}

func (c *chunkReader) Read(p []byte) (int, error) {
	for {
		if c.cur == nil {
			if len(c.chunks) == 0 {
				return 0, io.EOF
			}
			r, err := c.o.open(c.chunks[0].Hash)
			if err != nil {
				return 0, err
			}
			c.cur, c.n = r, 0
		}
		k, err := c.cur.Read(p)
		c.n += int64(k)
		if err == io.EOF {
			c.cur.Close()
			c.cur = nil
			if c.n != c.chunks[0].Size {
				return k, &CorruptError{Path: c.o.path(c.chunks[0].Hash), Reason: fmt.Sprintf("chunk is %d bytes, its list says %d", c.n, c.chunks[0].Size)}
			}
			c.chunks = c.chunks[1:]
			err = nil
		}
		if k > 0 || err != nil {
			return k, err
		}
	}
}

func (c *chunkReader) Close() error {
	if c.cur != nil {
		return c.cur.Close()
	}
	return nil
}

// keepChunks adds to keep the chunks of every kept content stored in chunks. A kept chunk list
// that cannot be read fails GC before it removes anything: which chunks it needs is unknown.
func (s *Store) keepChunks(keep map[Hash]bool) error {
	names, err := readDirNames(filepath.Dir(s.objects.listPath(Hash{})))
	if err != nil {
		return err
	}
	for _, n := range names {
		h, err := ParseHash(n)
		if err != nil || !keep[h] {
			continue
		}
		chunks, _, err := s.objects.readChunkList(h)
		if err != nil {
			return fmt.Errorf("gc: %w (nothing was removed; agent-rewind check names the file that needs it, check --repair stores it again from the workspace if a file there still has it)", err)
		}
		for _, c := range chunks {
			keep[c.Hash] = true
		}
	}
	return nil
}

// removeChunkLists removes the chunk lists of contents not in keep, before their chunks go: a
// crash in between leaves chunks no list names, never a list naming removed chunks.
func (s *Store) removeChunkLists(keep map[Hash]bool, res *GCResult, dryRun bool) error {
	dir := filepath.Dir(s.objects.listPath(Hash{}))
	names, err := readDirNames(dir)
	if err != nil || len(names) == 0 {
		return err
	}
	removed := false
	for _, n := range names {
		h, err := ParseHash(n)
		if err != nil || keep[h] {
			continue
		}
		name := filepath.Join(dir, n)
		if fi, err := os.Lstat(name); err == nil {
			res.BytesFreed += fi.Size()
		}
		res.ObjectsRemoved++
		if dryRun {
			continue
		}
		if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("gc: %w", err)
		}
		removed = true
	}
	if removed {
		return durable.SyncDir(dir)
	}
	return nil
}

// putChunk stages one chunk: in the batch's pack when it is small, as a loose object otherwise, as
// whole files are (a pack of large chunks would be rewritten whole by gc when one goes).
func (s *stager) putChunk(h Hash, b []byte) error {
	if len(b) <= smallFile {
		return s.putBytes(h, b)
	}
	s.mu.Lock()
	known, err := s.knownLocked(h)
	s.mu.Unlock()
	if err != nil || known {
		return err
	}
	f, err := s.tempFile()
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return err
	}
	return s.adopt(h, f.Name(), int64(len(b)))
}
