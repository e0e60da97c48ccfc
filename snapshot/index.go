package snapshot

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"path/filepath"
	"sync"

	"github.com/agent-rewind/rewind/internal/durable"
	"github.com/agent-rewind/rewind/internal/regular"
)

// indexMagic starts the stat cache file; the last byte is the format version.
const indexMagic = "RWINDEX\x01"

// indexEntry is one file of the stat cache: its stat at the time it was hashed, and the hash.
type indexEntry struct {
	Path string
	St   statInfo
	Blob Hash
	// recorded is the mtime (ns) of the index file, or the seal of the log record, that holds
	// the entry: an entry whose St.Mtime is not older is racily clean and is hashed again.
	recorded int64
}

// statIndex is the stat cache (FORMAT.md, "Index"): the index with its log applied.
type statIndex struct {
	entries []indexEntry // sorted by path
	base    uint32       // the index file's checksum (what its log must name); 0 without one
	size    int64        // the index file's bytes
	logSize int          // the bytes of the log's valid records, its header included
	logTorn bool         // the log holds a record that does not apply: rewrite the index
}

// clean reports whether a file whose lstat is st can reuse e's hash without being read.
func (x *statIndex) clean(e *indexEntry, st statInfo) bool {
	return e != nil && e.St == st && e.St.Mtime < e.recorded
}

// loadIndex reads the stat cache. A missing file gives an empty index; a damaged one gives an
// empty index and a warning (it is a cache: every file is simply hashed again).
func loadIndex(name string) (*statIndex, string, error) {
	data, err := regular.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return &statIndex{}, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("read stat cache %s: %w", name, err)
	}
	st, err := lstatPath(name)
	if err != nil {
		return nil, "", fmt.Errorf("stat %s: %w", name, err)
	}
	entries, err := decodeIndex(data)
	if err != nil {
		return &statIndex{}, fmt.Sprintf("stat cache %s ignored (%v): every file was read again", name, err), nil
	}
	for i := range entries {
		entries[i].recorded = st.Mtime
	}
	x := &statIndex{entries: entries, base: binary.LittleEndian.Uint32(data[len(data)-4:]), size: int64(len(data))}
	log, err := readIndexLog(name)
	if err != nil {
		return nil, "", fmt.Errorf("read stat cache %s: %w", indexLogName(name), err)
	}
	if log != nil {
		x.entries, x.logSize, x.logTorn = applyIndexLog(x.entries, x.base, log)
	}
	return x, "", nil
}

// encodeIndex encodes sorted entries.
func encodeIndex(entries []indexEntry) []byte {
	n := len(indexMagic) + 4 + 4
	for i := range entries {
		n += 2 + len(entries[i].Path) + 8*4 + 4 + 32
	}
	b := make([]byte, 0, n)
	b = append(b, indexMagic...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(entries)))
	for i := range entries {
		b = appendIndexEntry(b, &entries[i])
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli()))
}

// appendIndexEntry appends one entry as the index and its log encode it.
func appendIndexEntry(b []byte, e *indexEntry) []byte {
	b = binary.LittleEndian.AppendUint16(b, uint16(len(e.Path)))
	b = append(b, e.Path...)
	b = binary.LittleEndian.AppendUint64(b, uint64(e.St.Size))
	b = binary.LittleEndian.AppendUint64(b, uint64(e.St.Mtime))
	b = binary.LittleEndian.AppendUint64(b, uint64(e.St.Ctime))
	b = binary.LittleEndian.AppendUint64(b, e.St.Ino)
	b = binary.LittleEndian.AppendUint32(b, e.St.Mode)
	return append(b, e.Blob[:]...)
}

// decodeIndexFields decodes the fields after an entry's path (8*4 + 4 + 32 bytes of b).
func decodeIndexFields(e *indexEntry, r []byte) {
	e.St.Size = int64(binary.LittleEndian.Uint64(r))
	e.St.Mtime = int64(binary.LittleEndian.Uint64(r[8:]))
	e.St.Ctime = int64(binary.LittleEndian.Uint64(r[16:]))
	e.St.Ino = binary.LittleEndian.Uint64(r[24:])
	e.St.Mode = binary.LittleEndian.Uint32(r[32:])
	copy(e.Blob[:], r[36:68])
}

// castagnoli is CRC-32C, computed in hardware on amd64 and arm64: the index is a cache whose
// checksum only has to catch a torn or damaged write, so a CRC does, at a fraction of the cost.
// It is made on first use, not at package init: every agent-rewind process links this package,
// and the effect guard's hot path never needs it.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// decodeIndex decodes and checks an index file's bytes.
func decodeIndex(b []byte) ([]indexEntry, error) {
	const fixed = 8*4 + 4 + 32
	if len(b) < len(indexMagic)+4+4 || !bytes.Equal(b[:len(indexMagic)], []byte(indexMagic)) {
		return nil, fmt.Errorf("not a version 1 stat cache")
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, castagnoli()) != sum {
		return nil, fmt.Errorf("checksum mismatch")
	}
	// One string for all paths: each path is a substring of it, not an allocation of its own.
	all := string(body)
	r := body[len(indexMagic):]
	count := binary.LittleEndian.Uint32(r)
	r = r[4:]
	if uint64(count) > uint64(len(r))/(2+fixed) {
		return nil, fmt.Errorf("count %d exceeds the file", count)
	}
	entries := make([]indexEntry, count)
	for i := range entries {
		if len(r) < 2 {
			return nil, fmt.Errorf("truncated")
		}
		pl := int(binary.LittleEndian.Uint16(r))
		r = r[2:]
		if len(r) < pl+fixed {
			return nil, fmt.Errorf("truncated")
		}
		e := &entries[i]
		at := len(body) - len(r)
		e.Path = all[at : at+pl]
		r = r[pl:]
		decodeIndexFields(e, r)
		r = r[fixed:]
		if i > 0 && entries[i-1].Path >= e.Path {
			return nil, fmt.Errorf("entries not sorted at %q", e.Path)
		}
	}
	if len(r) != 0 {
		return nil, fmt.Errorf("%d trailing bytes", len(r))
	}
	return entries, nil
}

// writeIndex saves the stat cache of a capture when it changed: the changed entries appended to
// the log when the capture's cache had an index and the log stays under a quarter of it, else a
// new index.
func (s *Store) writeIndex(c *capture) error {
	if !c.indexDirty {
		return nil
	}
	var entries []indexEntry
	for i := range c.scan.entries {
		if e := &c.scan.entries[i]; e.Type == TypeFile {
			entries = append(entries, indexEntry{Path: e.Path, St: e.St, Blob: e.Blob})
		}
	}
	old := c.index
	if old == nil || old.base == 0 || old.logTorn || c.distrusted {
		return s.saveIndex(entries)
	}
	set, removed := indexChanges(old.entries, entries)
	body := encodeLogRecord(set, removed)
	if int64(old.logSize+len(body)) > max(old.size/4, 64<<10) {
		return s.saveIndex(entries)
	}
	if err := appendIndexLog(filepath.Join(s.state, "index"), old.base, body); err != nil {
		return fmt.Errorf("write stat cache: %w", err)
	}
	return nil
}

// indexChanges returns what turns the cache old into new (both sorted): the entries that are
// new, changed, or were racily clean (recorded again, so that they become clean), and the paths
// removed.
func indexChanges(old, new []indexEntry) (set []indexEntry, removed []string) {
	j := 0
	for i := range new {
		for j < len(old) && old[j].Path < new[i].Path {
			removed = append(removed, old[j].Path)
			j++
		}
		if j < len(old) && old[j].Path == new[i].Path {
			o := &old[j]
			j++
			if o.St == new[i].St && o.Blob == new[i].Blob && o.St.Mtime < o.recorded {
				continue
			}
		}
		set = append(set, new[i])
	}
	for ; j < len(old); j++ {
		removed = append(removed, old[j].Path)
	}
	return set, removed
}

// saveIndex writes a new index of entries and removes the log of the one it replaces.
func (s *Store) saveIndex(entries []indexEntry) error {
	name := filepath.Join(s.state, "index")
	if err := durable.WriteFileUnsynced(name, encodeIndex(entries), 0o600); err != nil {
		return fmt.Errorf("write stat cache: %w", err)
	}
	// A crash before the log goes leaves a log naming the old index's checksum: ignored.
	if err := removeIndexLog(name); err != nil {
		return fmt.Errorf("write stat cache: %w", err)
	}
	return nil
}
