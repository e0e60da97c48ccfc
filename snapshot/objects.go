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

	"golang.org/x/sync/errgroup"

	"github.com/agent-rewind/rewind/internal/regular"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
)

// objectStore is the content-addressed blob store: loose objects under StateDir/objects and
// packed ones under StateDir/packs (FORMAT.md, "Objects" and "Packs").
type objectStore struct {
	dir     string
	packDir string

	mu     sync.Mutex
	packs  []packIndex // every pack's index, once loaded (see forget)
	loaded bool

	// fault, set by tests only, is called before every open and read of a stored object or pack
	// index with the file's name: an error it returns is that read's error. It lets tests make
	// every read of a restore fail in turn, as a damaged disk would.
	fault func(name string) error
}

// check returns the injected fault for reading name, if any.
func (o *objectStore) check(name string) error {
	if o.fault == nil {
		return nil
	}
	return o.fault(name)
}

// forget drops the cached pack indexes: another process may have added or removed packs since.
// Every operation starts with it.
func (o *objectStore) forget() {
	o.mu.Lock()
	o.packs, o.loaded = nil, false
	o.mu.Unlock()
}

// packed returns where h is packed, loading the pack indexes on first use. Each index is sorted
// by hash and searched as it is: no table of every packed object is built, which a checkpoint
// that looks up a few new objects would spend more on than on the lookups.
func (o *objectStore) packed(h Hash) (packLoc, bool, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.loaded {
		ps, err := o.loadPacks()
		if err != nil {
			return packLoc{}, false, err
		}
		o.packs, o.loaded = ps, true
	}
	for _, p := range o.packs {
		if e, ok := p.find(h); ok {
			return packLoc{pack: p.pack, packEntry: e}, true, nil
		}
	}
	return packLoc{}, false, nil
}

// addPacked records the objects of a pack this process just finished.
func (o *objectStore) addPacked(p *packWriter) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.loaded {
		return // loaded fresh on next use
	}
	o.packs = append(o.packs, packIndex{pack: filepath.Join(o.packDir, p.id+".pack"), entries: p.entries})
}

// path returns the file name of object h: objects/ab/cdef….
func (o *objectStore) path(h Hash) string {
	s := h.String()
	return filepath.Join(o.dir, s[:2], s[2:])
}

func (o *objectStore) tmpDir() string { return filepath.Join(o.dir, "tmp") }

// has reports whether object h is stored, loose or packed.
// The packs first: after the first checkpoint most objects are packed (the manifests' trees
// always are), and a map lookup is cheaper than an lstat that fails.
func (o *objectStore) has(h Hash) (bool, error) {
	if _, ok, err := o.packed(h); ok || err != nil {
		return ok, err
	}
	_, err := os.Lstat(o.path(h))
	return err == nil, nil
}

// open opens object h for reading, verifying its content as it is read (see verifyingReader);
// a content stored in chunks is read from them (chunked.go).
// Every failure to open or read it is a *CorruptError: whatever the cause (a missing object, a
// directory or an unreadable file in its place, an I/O error, a pack cut short), the content
// cannot be had, and a restore treats all of them alike (it goes back to its safety checkpoint).
func (o *objectStore) open(h Hash) (io.ReadCloser, error) {
	name := o.path(h)
	f, err := openRead(o, name)
	if err == nil {
		return &verifyingReader{r: faultReader{f, o, name}, want: h, h: sha256.New(), name: name}, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, &CorruptError{Path: name, Reason: fmt.Sprintf("cannot be opened: %v", bare(err))}
	}
	// Packs are cached per process: another process may have written a pack since (every
	// checkpoint packs its manifest trees) or a GC replaced one. A reader that holds no lock
	// (List, Entries, Diff in a long-lived MCP server or UI) then misses: read the indexes again,
	// once.
	var loc packLoc
	var pf *os.File
	for retried := false; ; retried = true {
		var ok bool
		var perr error
		loc, ok, perr = o.packed(h)
		if perr != nil {
			var ce *CorruptError
			if errors.As(perr, &ce) {
				return nil, perr
			}
			return nil, &CorruptError{Path: o.packDir, Reason: fmt.Sprintf("pack indexes cannot be read: %v", perr)}
		}
		if !ok && !retried {
			// Neither loose nor packed: in chunks (chunked.go), else maybe in a newer pack.
			if r, ok, err := o.openChunked(h); ok {
				return r, err
			}
			o.forget()
			continue
		}
		if !ok {
			return nil, &CorruptError{Path: name, Reason: "object is missing, loose and packed (removed by hand, or by a gc that did not know a checkpoint still needed it)"}
		}
		pf, err = openRead(o, loc.pack)
		if errors.Is(err, fs.ErrNotExist) && !retried {
			o.forget()
			continue
		}
		if err != nil {
			return nil, &CorruptError{Path: loc.pack, Reason: fmt.Sprintf("cannot be opened: %v", bare(err))}
		}
		break
	}
	name = fmt.Sprintf("%s (object %s at offset %d)", loc.pack, h, loc.Off)
	r := sectionCloser{io.NewSectionReader(pf, loc.Off, loc.Size), pf}
	return &verifyingReader{r: faultReader{r, o, loc.pack}, want: h, h: sha256.New(), name: name}, nil
}

// openRead opens a stored file for reading, after the injected fault if any.
func openRead(o *objectStore, name string) (*os.File, error) {
	if err := o.check(name); err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return regular.Open(name)
}

// faultReader consults the injected fault before every read.
type faultReader struct {
	r    io.ReadCloser
	o    *objectStore
	name string
}

func (f faultReader) Read(p []byte) (int, error) {
	if err := f.o.check(f.name); err != nil {
		return 0, err
	}
	return f.r.Read(p)
}

func (f faultReader) Close() error { return f.r.Close() }

// verifyingReader hashes what it reads and fails at EOF when the content does not match its name,
// so a damaged object is never restored silently. A read error is a *CorruptError too.
type verifyingReader struct {
	r    io.ReadCloser
	h    hash.Hash
	want Hash
	name string
}

func (v *verifyingReader) Read(p []byte) (int, error) {
	n, err := v.r.Read(p)
	v.h.Write(p[:n])
	switch {
	case err == io.EOF:
		var got Hash
		v.h.Sum(got[:0])
		if got != v.want {
			return n, &CorruptError{Path: v.name, Reason: fmt.Sprintf("content hashes to %s", got)}
		}
	case err != nil:
		var ce *CorruptError
		if errors.As(err, &ce) {
			return n, err // a chunk of a chunked content names itself (chunked.go)
		}
		return n, &CorruptError{Path: v.name, Reason: fmt.Sprintf("cannot be read: %v", bare(err))}
	}
	return n, err
}

// bare drops the operation and path of a *fs.PathError, which a CorruptError names already.
func bare(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func (v *verifyingReader) Close() error { return v.r.Close() }

// cleanTmp removes what an interrupted writer left in objects/tmp. Call it under the lock.
// The directory itself stays: creating one costs more than listing it on some file systems.
func (o *objectStore) cleanTmp() error {
	names, err := readDirNames(o.tmpDir())
	if err != nil {
		return err
	}
	if names == nil {
		if _, err := os.Lstat(o.tmpDir()); err != nil {
			return os.MkdirAll(o.tmpDir(), 0o700)
		}
	}
	for _, n := range names {
		if err := os.RemoveAll(filepath.Join(o.tmpDir(), n)); err != nil {
			return err
		}
	}
	return nil
}

// stager collects the new objects of one checkpoint, then makes them durable and visible together
// (commit). Small objects go into one new pack, with the checkpoint's trees; larger ones are
// staged as files in objects/tmp and renamed into place (FORMAT.md, "Objects" and "Packs").
type stager struct {
	o        *objectStore
	mu       sync.Mutex
	pending  map[Hash]string // loose object -> its temporary file
	pack     *packWriter     // created on the first small object
	inPack   map[Hash]bool
	lists    map[Hash]string // chunk list of a content -> its temporary file (chunked.go)
	newBytes int64
}

func newStager(o *objectStore) *stager {
	return &stager{o: o, pending: make(map[Hash]string), inPack: make(map[Hash]bool)}
}

// count returns how many new objects are staged.
func (s *stager) count() int { return len(s.pending) + len(s.inPack) }

// knownLocked reports whether h is stored or already staged; s.mu is held.
func (s *stager) knownLocked(h Hash) (bool, error) {
	if _, ok := s.pending[h]; ok || s.inPack[h] {
		return true, nil
	}
	if _, ok := s.lists[h]; ok {
		return true, nil
	}
	return s.o.has(h)
}

// putBytes stages data as object h in the batch's pack unless it is already stored or staged:
// small contents (at most smallFile bytes; larger ones are staged loose, see tempFile) and the
// checkpoint's trees, whatever their size. A checkpoint of a few changed files then flushes one
// pack and its index, not a file and a fan-out directory per content.
func (s *stager) putBytes(h Hash, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	known, err := s.knownLocked(h)
	if err != nil || known {
		return err
	}
	if s.pack == nil {
		if s.pack, err = s.o.newPack(); err != nil {
			return err
		}
	}
	if err := s.pack.add(h, data); err != nil {
		return err
	}
	s.inPack[h] = true
	s.newBytes += int64(len(data))
	return nil
}

// tempFile returns a new staging file for content whose hash is not known yet (large files are
// hashed while they are copied); pass it to adopt or discard.
func (s *stager) tempFile() (*os.File, error) {
	return os.CreateTemp(s.o.tmpDir(), "obj-*")
}

// adopt registers the staged file tmp as object h; a duplicate is removed.
func (s *stager) adopt(h Hash, tmp string, size int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	known, err := s.knownLocked(h)
	if err != nil || known {
		os.Remove(tmp)
		return err
	}
	s.pending[h] = tmp
	s.newBytes += size
	return nil
}

// discard removes what the stager wrote and did not commit: the unfinished pack and the staged
// temporary files. A checkpoint that fails (a full disk, a read error) calls it, so its partial
// pack or temporary objects do not stay in the store until the next writer.
func (s *stager) discard() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pack != nil {
		s.pack.abort()
		s.pack = nil
	}
	for h, tmp := range s.pending {
		os.Remove(tmp)
		delete(s.pending, h)
	}
	clear(s.inPack)
	s.discardLists()
}

// fewFiles is the batch size up to which files are flushed one by one (fsync each, then each
// directory) rather than with syncfs(2), which also waits for every other process's unwritten
// data on the file system: cheaper for the common small checkpoint or restore on a busy disk.
const fewFiles = 64

// commit makes every staged object durable, then visible under its name. On failure what it
// had not made visible is removed (see discard).
func (s *stager) commit() (err error) {
	defer func() {
		if err != nil {
			s.discard()
		}
	}()
	if s.pack != nil {
		if err := s.o.finishPack(s.pack); err != nil {
			return fmt.Errorf("write pack: %w", err)
		}
		s.o.addPacked(s.pack)
		s.pack = nil
	}
	if len(s.pending) == 0 {
		return s.commitLists()
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
		delete(s.pending, h)
	}
	// The fan-out directories may be new: their entries in objects/ need flushing too.
	if err := flush(s.o.dir, nil, append(dirs, s.o.dir)); err != nil {
		return fmt.Errorf("flush new objects: %w", err)
	}
	return s.commitLists()
}

// flush makes files' contents and dirs' entries durable: fsync each when there are few, one
// syncfs(2) of the file system holding fs otherwise.
func flush(fs string, files, dirs []string) error {
	if len(files)+len(dirs) > fewFiles {
		return platform.SyncFS(fs)
	}
	return fsyncAll(append(files, dirs...), func(name string) (*os.File, error) { return os.Open(name) })
}

// fsyncAll opens and fsyncs every name, concurrently: the file system batches concurrent fsyncs
// into few journal commits, where one after the other would each wait for its own.
func fsyncAll(names []string, open func(string) (*os.File, error)) error {
	var g errgroup.Group
	g.SetLimit(16)
	for _, name := range names {
		g.Go(func() error {
			f, err := open(name)
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil // removed since (a restore's deleted path): nothing to flush
				}
				return err
			}
			err = f.Sync()
			f.Close()
			return err
		})
	}
	return g.Wait()
}
