package objects

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/agent-rewind/rewind/internal/durable"
	"github.com/agent-rewind/rewind/internal/regular"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
)

// Packs hold the small objects of a large batch (a first checkpoint, an npm install) in one file
// instead of one file each: creating tens of thousands of files is what a first checkpoint would
// otherwise spend most of its time on (FORMAT.md, "Packs").

// packIdxMagic starts a pack index; the last byte is the version.
const packIdxMagic = "RWPACKI\x01"

// PackMagic starts a pack written since 2026-12, whose end holds a copy of its index (the
// trailer, see packtrailer.go); packs written before have neither and start with their first
// object.
const PackMagic = "RWPACKD\x02"

// PackEntry locates one object in a pack.
type PackEntry struct {
	Hash Hash
	Off  int64
	Size int64
}

// PackLoc is where a packed object is: the pack file and the entry.
type PackLoc struct {
	Pack string // path of the .pack file
	PackEntry
}

// encodePackIdx writes the index file of a pack holding entries (sorted by hash).
func encodePackIdx(entries []PackEntry) []byte {
	b := make([]byte, 0, len(packIdxMagic)+4+len(entries)*48+32)
	b = append(b, packIdxMagic...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(entries)))
	for _, e := range entries {
		b = append(b, e.Hash[:]...)
		b = binary.LittleEndian.AppendUint64(b, uint64(e.Off))
		b = binary.LittleEndian.AppendUint64(b, uint64(e.Size))
	}
	sum := sha256.Sum256(b)
	return append(b, sum[:]...)
}

// decodePackIdx parses a pack index and checks it against the pack's size: entries sorted by
// hash, strictly, each inside the pack.
func decodePackIdx(b []byte, packSize int64) ([]PackEntry, error) {
	if len(b) < len(packIdxMagic)+4+32 || !bytes.Equal(b[:len(packIdxMagic)], []byte(packIdxMagic)) {
		return nil, fmt.Errorf("not a version 1 pack index")
	}
	body, sum := b[:len(b)-32], b[len(b)-32:]
	if s := sha256.Sum256(body); !bytes.Equal(s[:], sum) {
		return nil, fmt.Errorf("checksum mismatch")
	}
	r := body[len(packIdxMagic):]
	n := binary.LittleEndian.Uint32(r)
	r = r[4:]
	if uint64(len(r)) != uint64(n)*48 {
		return nil, fmt.Errorf("%d entries do not fill %d bytes", n, len(r))
	}
	out := make([]PackEntry, n)
	for i := range out {
		e := &out[i]
		copy(e.Hash[:], r[:32])
		e.Off = int64(binary.LittleEndian.Uint64(r[32:]))
		e.Size = int64(binary.LittleEndian.Uint64(r[40:]))
		r = r[48:]
		if e.Off < 0 || e.Size < 0 || e.Off > packSize || e.Size > packSize-e.Off {
			return nil, fmt.Errorf("entry %s lies outside the pack", e.Hash)
		}
		if i > 0 && bytes.Compare(out[i-1].Hash[:], e.Hash[:]) >= 0 {
			return nil, fmt.Errorf("entries not sorted at %s", e.Hash)
		}
	}
	return out, nil
}

// packIndex is one pack's index: the pack file and its entries, sorted by hash. A pack this
// process wrote keeps its decoded entries; one read from its index file keeps the file's entry
// bytes as they are (raw, 48 bytes an entry), searched in place: a process that looks up a few
// objects (the hook before a tool call) neither decodes nor hashes every entry of every index.
// Each object is verified against its hash when it is read, and check verifies whole indexes.
type packIndex struct {
	pack    string
	entries []PackEntry
	raw     []byte
	size    int64 // the pack's size: a raw entry outside it is not found
}

// find returns h's entry in the pack, by binary search.
func (p *packIndex) find(h Hash) (PackEntry, bool) {
	if p.raw == nil {
		i, ok := slices.BinarySearchFunc(p.entries, h, func(e PackEntry, h Hash) int { return bytes.Compare(e.Hash[:], h[:]) })
		if !ok {
			return PackEntry{}, false
		}
		return p.entries[i], true
	}
	i, ok := sort.Find(len(p.raw)/48, func(i int) int { return bytes.Compare(h[:], p.raw[i*48:i*48+32]) })
	if !ok {
		return PackEntry{}, false
	}
	r := p.raw[i*48:]
	e := PackEntry{Hash: h, Off: int64(binary.LittleEndian.Uint64(r[32:])), Size: int64(binary.LittleEndian.Uint64(r[40:]))}
	if e.Off < 0 || e.Size < 0 || e.Off > p.size || e.Size > p.size-e.Off {
		return PackEntry{}, false // a damaged index: the object is missing, which open reports
	}
	return e, true
}

// PackIDs lists the packs of the store: those with an index (a pack without one is not, or not
// yet, part of the store), in the folder's order.
func (o *Store) PackIDs() ([]string, error) {
	ids, _, err := o.packListing()
	return ids, err
}

// packListing lists the packs with an index, and the packs without one (see cleanPacks).
func (o *Store) packListing() (indexed, indexless []string, err error) {
	names, err := platform.ReadDirNames(o.packDir)
	if err != nil {
		return nil, nil, err
	}
	indexed, indexless = splitPacks(names)
	return indexed, indexless, nil
}

// splitPacks sorts the names in packs/ into the ids of the packs with an index and of those
// without one; temporary files are neither.
func splitPacks(names []string) (indexed, indexless []string) {
	have := make(map[string]bool, len(names))
	for _, n := range names {
		have[n] = true
	}
	for _, n := range names {
		if strings.HasPrefix(n, ".") {
			continue
		}
		if id, ok := strings.CutSuffix(n, ".idx"); ok {
			indexed = append(indexed, id)
		} else if id, ok := strings.CutSuffix(n, ".pack"); ok && !have[id+".idx"] {
			indexless = append(indexless, id)
		}
	}
	return indexed, indexless
}

// loadPacks reads every pack index for lookups, and the index a pack whose index file is
// missing holds in its trailer: its objects stay readable until a writer writes the file back.
func (o *Store) loadPacks() ([]packIndex, error) {
	ids, indexless, err := o.packListing()
	if err != nil {
		return nil, err
	}
	var out []packIndex
	for _, id := range ids {
		p, err := o.readPackIdxRaw(id)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	for _, id := range indexless {
		if op := o.Orphan(id); op.Kind == PackTrailed {
			out = append(out, packIndex{pack: o.PackPath(id), entries: op.Entries})
		}
	}
	return out, nil
}

// readPackIdxRaw reads a pack index for lookups: its header and length are checked, its entries
// are not (see packIndex).
func (o *Store) readPackIdxRaw(id string) (packIndex, error) {
	idx := filepath.Join(o.packDir, id+".idx")
	b, size, err := o.readPackIdxFile(id)
	if err != nil {
		return packIndex{}, err
	}
	hdr := len(packIdxMagic) + 4
	if len(b) < hdr+32 || !bytes.Equal(b[:len(packIdxMagic)], []byte(packIdxMagic)) {
		return packIndex{}, &CorruptError{Path: idx, Reason: "not a version 1 pack index"}
	}
	raw := b[hdr : len(b)-32]
	if n := binary.LittleEndian.Uint32(b[len(packIdxMagic):]); uint64(len(raw)) != uint64(n)*48 {
		return packIndex{}, &CorruptError{Path: idx, Reason: fmt.Sprintf("%d entries do not fill %d bytes", n, len(raw))}
	}
	return packIndex{pack: o.PackPath(id), raw: raw, size: size}, nil
}

// ReadPackIdx reads and verifies a whole pack index (its checksum, order and bounds), as check
// and gc need it.
func (o *Store) ReadPackIdx(id string) ([]PackEntry, error) {
	b, size, err := o.readPackIdxFile(id)
	if err != nil {
		return nil, err
	}
	entries, err := decodePackIdx(b, size)
	if err != nil {
		return nil, &CorruptError{Path: filepath.Join(o.packDir, id+".idx"), Reason: err.Error()}
	}
	return entries, nil
}

// readPackIdxFile reads pack id's index file, and the size of its pack, which must exist.
func (o *Store) readPackIdxFile(id string) ([]byte, int64, error) {
	idx := filepath.Join(o.packDir, id+".idx")
	pack := o.PackPath(id)
	if err := o.check(idx); err != nil {
		return nil, 0, &fs.PathError{Op: "read", Path: idx, Err: err}
	}
	b, err := regular.ReadFile(idx)
	if err != nil {
		return nil, 0, err
	}
	fi, err := os.Lstat(pack)
	if err == nil && !fi.Mode().IsRegular() { // its size would be no size: say what it is
		return nil, 0, &regular.NotRegularError{Path: pack, Type: fi.Mode().Type()}
	}
	if err != nil {
		return nil, 0, &CorruptError{Path: pack, Reason: "pack is missing but its index exists"}
	}
	return b, fi.Size(), nil
}

// PackWriter appends the objects of one batch to a new pack file.
type PackWriter struct {
	id      string
	f       *os.File
	off     int64
	flushed int64 // offset up to which writeback was started
	Entries []PackEntry
}

// writebackChunk is how much a pack grows between two platform.StartWriteback calls.
const writebackChunk = 32 << 20

// NewPack starts a new pack file in packs/ (its name a random id), for FinishPack or Abort.
func (o *Store) NewPack() (*PackWriter, error) {
	if err := os.MkdirAll(o.packDir, 0o700); err != nil {
		return nil, err
	}
	id := RandomHex(8)
	f, err := os.OpenFile(o.PackPath(id), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	if _, err := f.WriteString(PackMagic); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return &PackWriter{id: id, f: f, off: int64(len(PackMagic))}, nil
}

// Add appends data as object h; the caller serialises calls.
func (p *PackWriter) Add(h Hash, data []byte) error {
	if _, err := p.f.Write(data); err != nil {
		return err
	}
	p.Entries = append(p.Entries, PackEntry{Hash: h, Off: p.off, Size: int64(len(data))})
	p.off += int64(len(data))
	if p.off-p.flushed >= writebackChunk {
		platform.StartWriteback(p.f, p.flushed, p.off-p.flushed)
		p.flushed = p.off
	}
	return nil
}

// FinishPack appends the index to the pack as its trailer, makes the pack and its index durable,
// then names the index: the index is what makes the pack's objects exist, so its rename is the
// commit. The pack and the index's temporary file are flushed together (concurrent fsyncs share a
// journal commit), not one after the other.
func (o *Store) FinishPack(p *PackWriter) error {
	slices.SortFunc(p.Entries, func(a, b PackEntry) int { return bytes.Compare(a.Hash[:], b.Hash[:]) })
	idx := encodePackIdx(p.Entries)
	if _, err := p.f.Write(appendPackTrailer(nil, idx)); err != nil {
		p.f.Close()
		return err
	}
	tmp, err := os.CreateTemp(o.packDir, ".tmp-"+p.id+".idx-*")
	if err != nil {
		p.f.Close()
		return err
	}
	_, err = tmp.Write(idx)
	var g errgroup.Group
	if err == nil {
		g.Go(p.f.Sync)
		g.Go(tmp.Sync)
		err = g.Wait()
	}
	for _, f := range []*os.File{p.f, tmp} {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		err = durable.Rename(tmp.Name(), filepath.Join(o.packDir, p.id+".idx"))
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// Abort removes an unfinished pack: its index first (finishPack may have renamed it into place
// before failing to flush its directory), then the pack. Both are this writer's own new files,
// created under the lock, so nothing else refers to them.
func (p *PackWriter) Abort() {
	p.f.Close()
	os.Remove(strings.TrimSuffix(p.f.Name(), ".pack") + ".idx")
	os.Remove(p.f.Name())
}

// CleanPacks removes temporary index files and the packs an interrupted write left, and gives a
// pack whose index is missing its index back from the copy at its end (packtrailer.go): a crash
// between the pack's flush and the index's rename, or an index lost, loses no object. A pack
// without an index that was written before packs had that copy is left for check --repair,
// which rebuilds its index from the manifests (internal/check's salvage.go): it may hold what a checkpoint
// needs, so no writer removes it. Call it under the lock.
func (o *Store) CleanPacks() error {
	names, err := platform.ReadDirNames(o.packDir)
	if err != nil {
		return err
	}
	for _, n := range names {
		if strings.HasPrefix(n, ".tmp-") {
			if err := os.Remove(filepath.Join(o.packDir, n)); err != nil && !os.IsNotExist(err) {
				return err
			}
		}
	}
	_, indexless := splitPacks(names)
	for _, id := range indexless {
		switch st := o.Orphan(id); st.Kind {
		case PackTrailed:
			// A pack the commit log's writer left unsynced (logged.go) is flushed before its
			// index makes it part of the store: later checkpoints will rely on its objects.
			if err := FsyncAll([]string{o.PackPath(id)}, platform.OpenToFlush); err != nil {
				return fmt.Errorf("flush %s.pack: %w", id, err)
			}
			if err := o.WriteIdxBytes(id, st.Idx); err != nil {
				return fmt.Errorf("rebuild the index of %s.pack from its trailer: %w", id, err)
			}
		case PackInterrupted:
			if err := os.Remove(filepath.Join(o.packDir, id+".pack")); err != nil && !os.IsNotExist(err) {
				return err
			}
		}
	}
	return nil
}

// PackPath returns the file name of pack id: packs/<id>.pack.
func (o *Store) PackPath(id string) string { return filepath.Join(o.packDir, id+".pack") }

// RemovePacks removes the packs ids: their indexes first, durably (one flush of the folder for
// all: the index is what makes a pack's objects exist), then the pack files. A pack already gone
// is not an error.
func (o *Store) RemovePacks(ids []string) error {
	for _, id := range ids {
		if err := os.Remove(filepath.Join(o.packDir, id+".idx")); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if err := durable.SyncDir(o.packDir); err != nil {
		return err
	}
	for _, id := range ids {
		if err := os.Remove(o.PackPath(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// WritePackIdx writes the index of pack id for entries (sorted by hash), durably.
func (o *Store) WritePackIdx(id string, entries []PackEntry) error {
	return o.WriteIdxBytes(id, encodePackIdx(entries))
}

// LoadedPacks is how many packs this Store has loaded and written since it last forgot them,
// and whether it has loaded them at all.
func (o *Store) LoadedPacks() (int, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.packs), o.loaded
}

// IndexlessPacks lists the ids of the packs that have no index file, sorted.
func (o *Store) IndexlessPacks() ([]string, error) {
	_, ids, err := o.packListing()
	slices.Sort(ids)
	return ids, err
}

// SectionCloser reads one object out of a pack file, and closes the file when done.
type SectionCloser struct {
	*io.SectionReader
	File *os.File
}

// Close closes the pack file.
func (s SectionCloser) Close() error { return s.File.Close() }
