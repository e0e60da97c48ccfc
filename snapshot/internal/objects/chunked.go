package objects

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
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
)

// Chunked contents (FORMAT.md, "Chunked contents"): a file larger than ChunkedFile is stored as
// chunks, each an ordinary object, and a chunk list chunklists/<hash of the whole content> that
// names them in order. The whole content's hash stays what trees, the stat cache and diffs use.

var chunkBufPool = sync.Pool{New: func() any { b := make([]byte, 2*MaxChunk); return &b }}

// ListPath returns the file name of the chunk list of content h.
func (o *Store) ListPath(h Hash) string {
	return filepath.Join(filepath.Dir(o.dir), "chunklists", h.String())
}

// PutChunks reads r to its end, cutting it into chunks that it stages as objects and hashing
// every byte into whole; it returns the chunks and how many bytes it read.
func (s *Stager) PutChunks(r io.Reader, whole io.Writer) ([]ChunkRef, int64, error) {
	bp := chunkBufPool.Get().(*[]byte)
	defer chunkBufPool.Put(bp)
	c := newChunker(r, whole, *bp)
	var chunks []ChunkRef
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
		chunks = append(chunks, ChunkRef{h, int64(len(b))})
	}
}

// PutList stages the chunk list of content h, unless h is stored or staged already (in chunks,
// or whole by a version that did not chunk). Only contents over ChunkedFile have lists, so only
// here is a list looked for: other objects pay no extra lstat.
func (s *Stager) PutList(h Hash, chunks []ChunkRef) error {
	s.mu.Lock()
	known, err := s.knownLocked(h)
	s.mu.Unlock()
	if err != nil || known || s.o.HasList(h) {
		return err
	}
	data := EncodeChunkList(chunks)
	f, err := os.CreateTemp(s.o.TmpDir(), "list-*")
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
	s.NewBytes += int64(len(data))
	return nil
}

// commitLists makes the staged chunk lists durable, then visible. commit calls it once every
// object is: a chunk list that exists names only stored chunks.
func (s *Stager) commitLists() error {
	if len(s.lists) == 0 {
		return nil
	}
	var tmps []string
	for _, tmp := range s.lists {
		tmps = append(tmps, tmp)
	}
	if err := FsyncAll(tmps, platform.OpenToFlush); err != nil {
		return fmt.Errorf("flush new chunk lists: %w", err)
	}
	dir := filepath.Dir(s.o.ListPath(Hash{}))
	_, err := os.Lstat(dir)
	created := errors.Is(err, fs.ErrNotExist)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for h, tmp := range s.lists {
		if err := durable.RenameDirUnsynced(tmp, s.o.ListPath(h)); err != nil { // dir is synced below
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
func (s *Stager) discardLists() {
	for h, tmp := range s.lists {
		os.Remove(tmp)
		delete(s.lists, h)
	}
}

// HasList reports whether content h is stored in chunks.
func (o *Store) HasList(h Hash) bool {
	_, err := os.Lstat(o.ListPath(h))
	return err == nil
}

// ReadChunkList reads and parses the chunk list of content h; a missing list is fs.ErrNotExist,
// any other failure a *CorruptError.
func (o *Store) ReadChunkList(h Hash) ([]ChunkRef, int64, error) {
	name := o.ListPath(h)
	f, err := openRead(o, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, err
	}
	if err != nil {
		return nil, 0, &CorruptError{Path: name, Reason: fmt.Sprintf("cannot be opened: %v", Bare(err))}
	}
	defer f.Close()
	b, err := io.ReadAll(faultReader{f, o, name})
	if err != nil {
		return nil, 0, &CorruptError{Path: name, Reason: fmt.Sprintf("cannot be read: %v", Bare(err))}
	}
	chunks, size, err := ParseChunkList(b)
	if err != nil {
		return nil, 0, &CorruptError{Path: name, Reason: fmt.Sprintf("chunk list is damaged: %v", err)}
	}
	return chunks, size, nil
}

// OpenChunked opens content h from its chunks, verifying each chunk and, at the end, the whole;
// ok is false when h has no chunk list.
func (o *Store) OpenChunked(h Hash) (r io.ReadCloser, ok bool, err error) {
	chunks, _, err := o.ReadChunkList(h)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, true, err
	}
	name := o.ListPath(h)
	return &verifyingReader{r: &chunkReader{o: o, chunks: chunks}, want: h, h: sha256.New(), name: name}, true, nil
}

// chunkReader reads the chunks of a list one after the other, each verified as it is read.
type chunkReader struct {
	o      *Store
	chunks []ChunkRef
	cur    io.ReadCloser
	n      int64 // bytes read of the current chunk
}

func (c *chunkReader) Read(p []byte) (int, error) {
	for {
		if c.cur == nil {
			if len(c.chunks) == 0 {
				return 0, io.EOF
			}
			r, err := c.o.Open(c.chunks[0].Hash)
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
				return k, &CorruptError{Path: c.o.Path(c.chunks[0].Hash), Reason: fmt.Sprintf("chunk is %d bytes, its list says %d", c.n, c.chunks[0].Size)}
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

// putChunk stages one chunk: in the batch's pack when it is small, as a loose object otherwise, as
// whole files are (a pack of large chunks would be rewritten whole by gc when one goes).
func (s *Stager) putChunk(h Hash, b []byte) error {
	if len(b) <= SmallFile {
		return s.PutBytes(h, b)
	}
	s.mu.Lock()
	known, err := s.knownLocked(h)
	s.mu.Unlock()
	if err != nil || known {
		return err
	}
	f, err := s.TempFile()
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
	return s.Adopt(h, f.Name(), int64(len(b)))
}
