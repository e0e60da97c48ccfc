package objects

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

	"github.com/agent-rewind/rewind/internal/durable"
	"github.com/agent-rewind/rewind/internal/regular"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
)

// Store is the content-addressed blob store: loose objects under StateDir/objects and
// packed ones under StateDir/packs (FORMAT.md, "Objects" and "Packs").
type Store struct {
	dir     string // StateDir/objects: loose objects, objects/tmp, and the fan-out folders
	packDir string // StateDir/packs

	mu     sync.Mutex
	packs  []packIndex // every pack's index, once loaded (see Forget)
	loaded bool

	// Fault, set by tests only, is called before every open and read of a stored object or pack
	// index with the file's name: an error it returns is that read's error. It lets tests make
	// every read of a restore fail in turn, as a damaged disk would.
	Fault func(name string) error
}

// New returns the object store of the state directory state (which Open of the snapshot
// package creates, with objects/ and packs/ in it).
func New(state string) *Store {
	return &Store{dir: filepath.Join(state, "objects"), packDir: filepath.Join(state, "packs")}
}

// check returns the injected fault for reading name, if any.
func (o *Store) check(name string) error {
	if o.Fault == nil {
		return nil
	}
	return o.Fault(name)
}

// Forget drops the cached pack indexes: another process may have added or removed packs since.
// Every operation starts with it.
func (o *Store) Forget() {
	o.mu.Lock()
	o.packs, o.loaded = nil, false
	o.mu.Unlock()
}

// Packed returns where h is packed, loading the pack indexes on first use. Each index is sorted
// by hash and searched as it is: no table of every packed object is built, which a checkpoint
// that looks up a few new objects would spend more on than on the lookups.
func (o *Store) Packed(h Hash) (PackLoc, bool, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.loaded {
		ps, err := o.loadPacks()
		if err != nil {
			return PackLoc{}, false, err
		}
		o.packs, o.loaded = ps, true
	}
	for _, p := range o.packs {
		if e, ok := p.find(h); ok {
			return PackLoc{Pack: p.pack, PackEntry: e}, true, nil
		}
	}
	return PackLoc{}, false, nil
}

// addPacked records the objects of a pack this process just finished.
func (o *Store) addPacked(p *PackWriter) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.loaded {
		return // loaded fresh on next use
	}
	o.packs = append(o.packs, packIndex{pack: o.PackPath(p.id), entries: p.Entries})
}

// Path returns the file name of object h: objects/ab/cdef….
func (o *Store) Path(h Hash) string {
	s := h.String()
	return filepath.Join(o.dir, s[:2], s[2:])
}

// TmpDir is objects/tmp, where new objects (and the manifests' and checkpoints' files) are staged.
func (o *Store) TmpDir() string { return filepath.Join(o.dir, "tmp") }

// Has reports whether object h is stored, loose or packed.
// The packs first: after the first checkpoint most objects are packed (the manifests' trees
// always are), and a map lookup is cheaper than an lstat that fails.
func (o *Store) Has(h Hash) (bool, error) {
	if _, ok, err := o.Packed(h); ok || err != nil {
		return ok, err
	}
	_, err := os.Lstat(o.Path(h))
	return err == nil, nil
}

// Open opens object h for reading, verifying its content as it is read (see verifyingReader);
// a content stored in chunks is read from them (chunked.go).
// Every failure to open or read it is a *CorruptError: whatever the cause (a missing object, a
// directory or an unreadable file in its place, an I/O error, a pack cut short), the content
// cannot be had, and a restore treats all of them alike (it goes back to its safety checkpoint).
func (o *Store) Open(h Hash) (io.ReadCloser, error) {
	name := o.Path(h)
	f, err := openRead(o, name)
	if err == nil {
		return &verifyingReader{r: faultReader{f, o, name}, want: h, h: sha256.New(), name: name}, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, &CorruptError{Path: name, Reason: fmt.Sprintf("cannot be opened: %v", Bare(err))}
	}
	// Packs are cached per process: another process may have written a pack since (every
	// checkpoint packs its manifest trees) or a GC replaced one. A reader that holds no lock
	// (List, Entries, Diff in a long-lived MCP server or UI) then misses: read the indexes again,
	// once.
	var loc PackLoc
	var pf *os.File
	for retried := false; ; retried = true {
		var ok bool
		var perr error
		loc, ok, perr = o.Packed(h)
		if perr != nil {
			var ce *CorruptError
			if errors.As(perr, &ce) {
				return nil, perr
			}
			return nil, &CorruptError{Path: o.packDir, Reason: fmt.Sprintf("pack indexes cannot be read: %v", perr)}
		}
		if !ok && !retried {
			// Neither loose nor packed: in chunks (chunked.go), else maybe in a newer pack.
			if r, ok, err := o.OpenChunked(h); ok {
				return r, err
			}
			o.Forget()
			continue
		}
		if !ok {
			return nil, &CorruptError{Path: name, Reason: "object is missing, loose and packed (removed by hand, or by a gc that did not know a checkpoint still needed it)"}
		}
		pf, err = openRead(o, loc.Pack)
		if errors.Is(err, fs.ErrNotExist) && !retried {
			o.Forget()
			continue
		}
		if err != nil {
			return nil, &CorruptError{Path: loc.Pack, Reason: fmt.Sprintf("cannot be opened: %v", Bare(err))}
		}
		break
	}
	name = fmt.Sprintf("%s (object %s at offset %d)", loc.Pack, h, loc.Off)
	r := SectionCloser{io.NewSectionReader(pf, loc.Off, loc.Size), pf}
	return &verifyingReader{r: faultReader{r, o, loc.Pack}, want: h, h: sha256.New(), name: name}, nil
}

// openRead opens a stored file for reading, after the injected fault if any.
func openRead(o *Store, name string) (*os.File, error) {
	if err := o.check(name); err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return regular.Open(name)
}

// faultReader consults the injected fault before every read.
type faultReader struct {
	r    io.ReadCloser
	o    *Store
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
		return n, &CorruptError{Path: v.name, Reason: fmt.Sprintf("cannot be read: %v", Bare(err))}
	}
	return n, err
}

// Bare drops the operation and path of a *fs.PathError, which a CorruptError names already.
func Bare(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func (v *verifyingReader) Close() error { return v.r.Close() }

// CleanTmp removes what an interrupted writer left in objects/tmp. Call it under the lock.
// The directory itself stays: creating one costs more than listing it on some file systems.
func (o *Store) CleanTmp() error {
	names, err := platform.ReadDirNames(o.TmpDir())
	if err != nil {
		return err
	}
	if names == nil {
		if _, err := os.Lstat(o.TmpDir()); err != nil {
			return os.MkdirAll(o.TmpDir(), 0o700)
		}
	}
	for _, n := range names {
		if err := os.RemoveAll(filepath.Join(o.TmpDir(), n)); err != nil {
			return err
		}
	}
	return nil
}

// Stager collects the new objects of one checkpoint, then makes them durable and visible together
// (commit). Small objects go into one new pack, with the checkpoint's trees; larger ones are
// staged as files in objects/tmp and renamed into place (FORMAT.md, "Objects" and "Packs").
type Stager struct {
	o        *Store
	mu       sync.Mutex
	pending  map[Hash]string // loose object -> its temporary file
	Pack     *PackWriter     // created on the first small object
	inPack   map[Hash]bool
	lists    map[Hash]string // chunk list of a content -> its temporary file (chunked.go)
	NewBytes int64
}

// NewStager starts a batch of new objects in o.
func NewStager(o *Store) *Stager {
	return &Stager{o: o, pending: make(map[Hash]string), inPack: make(map[Hash]bool)}
}

// Count returns how many new objects are staged.
func (s *Stager) Count() int { return len(s.pending) + len(s.inPack) }

// knownLocked reports whether h is stored or already staged; s.mu is held.
func (s *Stager) knownLocked(h Hash) (bool, error) {
	if _, ok := s.pending[h]; ok || s.inPack[h] {
		return true, nil
	}
	if _, ok := s.lists[h]; ok {
		return true, nil
	}
	return s.o.Has(h)
}

// PutBytes stages data as object h in the batch's pack unless it is already stored or staged:
// small contents (at most SmallFile bytes; larger ones are staged loose, see tempFile) and the
// checkpoint's trees, whatever their size. A checkpoint of a few changed files then flushes one
// pack and its index, not a file and a fan-out directory per content.
func (s *Stager) PutBytes(h Hash, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	known, err := s.knownLocked(h)
	if err != nil || known {
		return err
	}
	if s.Pack == nil {
		if s.Pack, err = s.o.NewPack(); err != nil {
			return err
		}
	}
	if err := s.Pack.Add(h, data); err != nil {
		return err
	}
	s.inPack[h] = true
	s.NewBytes += int64(len(data))
	return nil
}

// TempFile returns a new staging file for content whose hash is not known yet (large files are
// hashed while they are copied); pass it to adopt or discard.
func (s *Stager) TempFile() (*os.File, error) {
	return os.CreateTemp(s.o.TmpDir(), "obj-*")
}

// Adopt registers the staged file tmp as object h; a duplicate is removed.
func (s *Stager) Adopt(h Hash, tmp string, size int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	known, err := s.knownLocked(h)
	if err != nil || known {
		os.Remove(tmp)
		return err
	}
	s.pending[h] = tmp
	s.NewBytes += size
	return nil
}

// Discard removes what the Stager wrote and did not commit: the unfinished pack and the staged
// temporary files. A checkpoint that fails (a full disk, a read error) calls it, so its partial
// pack or temporary objects do not stay in the store until the next writer.
func (s *Stager) Discard() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Pack != nil {
		s.Pack.Abort()
		s.Pack = nil
	}
	for h, tmp := range s.pending {
		os.Remove(tmp)
		delete(s.pending, h)
	}
	clear(s.inPack)
	s.discardLists()
}

// FewFiles is the batch size up to which files are flushed one by one (fsync each, then each
// directory) rather than with syncfs(2), which also waits for every other process's unwritten
// data on the file system: cheaper for the common small checkpoint or restore on a busy disk.
const FewFiles = 64

// Commit makes every staged object durable, then visible under its name. On failure what it
// had not made visible is removed (see discard).
func (s *Stager) Commit() (err error) {
	defer func() {
		if err != nil {
			s.Discard()
		}
	}()
	if s.Pack != nil {
		if err := s.o.FinishPack(s.Pack); err != nil {
			return fmt.Errorf("write pack: %w", err)
		}
		s.o.addPacked(s.Pack)
		s.Pack = nil
	}
	if len(s.pending) == 0 {
		return s.commitLists()
	}
	var tmps []string
	for _, tmp := range s.pending {
		tmps = append(tmps, tmp)
	}
	if err := Flush(s.o.dir, tmps, nil); err != nil {
		return fmt.Errorf("flush new objects: %w", err)
	}
	made := make(map[string]bool)
	var dirs []string
	for h, tmp := range s.pending {
		name := s.o.Path(h)
		dir := filepath.Dir(name)
		if !made[dir] {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return err
			}
			made[dir] = true
			dirs = append(dirs, dir)
		}
		if err := durable.RenameDirUnsynced(tmp, name); err != nil { // the folders are flushed below
			return fmt.Errorf("store object %s: %w", h, err)
		}
		delete(s.pending, h)
	}
	// The fan-out directories may be new: their entries in objects/ need flushing too.
	if err := Flush(s.o.dir, nil, append(dirs, s.o.dir)); err != nil {
		return fmt.Errorf("flush new objects: %w", err)
	}
	return s.commitLists()
}

// Flush makes files' contents and dirs' entries durable: fsync each when there are few (or the
// volume cannot be flushed whole here: platform.ErrNoVolumeFlush), one syncfs(2) of the file
// system holding fs otherwise.
func Flush(fs string, files, dirs []string) error {
	if len(files)+len(dirs) > FewFiles {
		if err := platform.SyncFS(fs); !errors.Is(err, platform.ErrNoVolumeFlush) {
			return err
		}
	}
	return FsyncAll(append(files, dirs...), platform.OpenToFlush)
}

// FsyncAll opens and fsyncs every name, concurrently: the file system batches concurrent fsyncs
// into few journal commits, where one after the other would each wait for its own. An open that
// gives no file and no error has nothing to flush (a folder on Windows: platform.OpenToFlush).
func FsyncAll(names []string, open func(string) (*os.File, error)) error {
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
			if f == nil {
				return nil
			}
			err = f.Sync()
			f.Close()
			return err
		})
	}
	return g.Wait()
}
