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
	"unsafe"

	"github.com/agent-rewind/rewind/internal/durable"
	"github.com/agent-rewind/rewind/internal/regular"
)

// indexMagic starts the stat cache file; the last byte is the format version. Version 2 adds
// the exclusion rules' key to the header and directory entries (treecache.go); version 1 files
// are still read (they hold files only).
const (
	indexMagic   = "RWINDEX\x02"
	indexMagicV1 = "RWINDEX\x01"
)

// indexEntry is one file of the stat cache: its stat at the time it was hashed, and the hash; or
// one directory (St.Mode a directory's; "" is the root): its stat when its tree was encoded, and
// the tree's hash (treecache.go).
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
	entries  []indexEntry // sorted by path; empty while body holds them (see loadIndexLazy)
	body     *indexBody   // the entries still encoded, checked, each recorded at recorded
	recorded int64
	base     uint32 // the index file's checksum (what its log must name); 0 without one
	size     int64  // the index file's bytes
	logSize  int    // the bytes of the log's valid records, its header included
	logTorn  bool   // the log holds a record that does not apply: rewrite the index
	rules    Hash   // the key of the exclusion rules its directory entries were made under
}

// clean reports whether a file whose lstat is st can reuse e's hash without being read.
func (x *statIndex) clean(e *indexEntry, st statInfo) bool {
	return e != nil && e.St == st && e.St.Mtime < e.recorded
}

// loadIndex reads the stat cache. A missing file gives an empty index; a damaged one gives an
// empty index and a warning (it is a cache: every file is simply hashed again).
func loadIndex(name string) (*statIndex, string, error) {
	x, warn, err := loadIndexLazy(name)
	if x != nil {
		x.decode()
	}
	return x, warn, err
}

// loadIndexLazy is loadIndex leaving an index without a log encoded, checked, for a capture to
// read in place (cursor): decoding it first would fill 96 bytes a path (2 MB for 20,000 files)
// that a no-change checkpoint reads once.
func loadIndexLazy(name string) (*statIndex, string, error) {
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
	body, rules, err := checkIndex(data)
	if err != nil {
		return &statIndex{}, fmt.Sprintf("stat cache %s ignored (%v): every file was read again", name, err), nil
	}
	x := &statIndex{body: &body, recorded: st.Mtime, rules: rules, base: binary.LittleEndian.Uint32(data[len(data)-4:]), size: int64(len(data))}
	log, err := readIndexLog(name)
	if err != nil {
		return nil, "", fmt.Errorf("read stat cache %s: %w", indexLogName(name), err)
	}
	if log != nil {
		x.decode()
		x.entries, x.logSize, x.logTorn = applyIndexLog(x.entries, x.base, log)
	}
	return x, "", nil
}

// decode decodes the entries body still holds.
func (x *statIndex) decode() {
	if x.body == nil {
		return
	}
	x.entries = make([]indexEntry, x.body.count)
	for i := range x.entries {
		x.body.next(&x.entries[i])
		x.entries[i].recorded = x.recorded
	}
	x.body = nil
}

// count returns the number of entries.
func (x *statIndex) count() int {
	if x.body != nil {
		return x.body.count
	}
	return len(x.entries)
}

// indexCursor reads a stat cache's entries in order, decoded or in place.
type indexCursor struct {
	x    *statIndex
	j    int       // the next decoded entry
	body indexBody // the encoded entries not read yet
	cur  indexEntry
	ok   bool
}

// cursor returns a cursor at x's first entry.
func (x *statIndex) cursor() *indexCursor {
	c := &indexCursor{x: x}
	if x.body != nil {
		c.body = *x.body
	}
	c.advance()
	return c
}

// entry returns the entry at the cursor, nil past the last; advance overwrites it.
func (c *indexCursor) entry() *indexEntry {
	if !c.ok {
		return nil
	}
	return &c.cur
}

// advance moves the cursor to the next entry.
func (c *indexCursor) advance() {
	if c.x.body != nil {
		if c.ok = c.body.count > 0; c.ok {
			c.body.next(&c.cur)
			c.cur.recorded = c.x.recorded
		}
		return
	}
	if c.ok = c.j < len(c.x.entries); c.ok {
		c.cur = c.x.entries[c.j]
		c.j++
	}
}

// encodeIndex encodes sorted entries made under the exclusion rules whose key is rules.
func encodeIndex(entries []indexEntry, rules Hash) []byte {
	n := len(indexMagic) + 32 + 4 + 4
	for i := range entries {
		n += 2 + len(entries[i].Path) + 8*4 + 4 + 32
	}
	b := make([]byte, 0, n)
	b = append(b, indexMagic...)
	b = append(b, rules[:]...)
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

// decodeIndex decodes and checks an index file's bytes (version 1 or 2), and returns the key of
// the rules its directory entries were made under (zero for version 1, which has none). The
// entries' paths point into b, which must not be modified afterwards.
func decodeIndex(b []byte) ([]indexEntry, Hash, error) {
	body, rules, err := checkIndex(b)
	if err != nil {
		return nil, rules, err
	}
	entries := make([]indexEntry, body.count)
	for i := range entries {
		body.next(&entries[i])
	}
	return entries, rules, nil
}

// indexBody is the entries of a checked index file, still encoded: next decodes them in order.
type indexBody struct {
	b     []byte // the file's bytes but its checksum
	all   string // b as a string: paths are substrings of it
	at    int    // where the next entry starts
	count int    // the entries left
}

// next decodes the next entry into e; the body must have one left (count > 0).
func (r *indexBody) next(e *indexEntry) {
	const fixed = 8*4 + 4 + 32
	pl := int(binary.LittleEndian.Uint16(r.b[r.at:]))
	at := r.at + 2
	e.Path = r.all[at : at+pl]
	decodeIndexFields(e, r.b[at+pl:])
	r.at = at + pl + fixed
	r.count--
}

// checkIndex checks an index file's bytes (version 1 or 2): its magic, checksum, every entry's
// length, the entries' order and nothing after them; it returns its entries, still encoded, and
// the key of the rules its directory entries were made under (zero for version 1, which has
// none). The entries' paths point into b, which must not be modified afterwards.
func checkIndex(b []byte) (indexBody, Hash, error) {
	const fixed = 8*4 + 4 + 32
	var rules Hash
	hdr := len(indexMagic) + 32
	switch {
	case len(b) >= len(indexMagicV1) && bytes.Equal(b[:len(indexMagicV1)], []byte(indexMagicV1)):
		hdr = len(indexMagicV1)
	case len(b) >= len(indexMagic) && bytes.Equal(b[:len(indexMagic)], []byte(indexMagic)):
	default:
		return indexBody{}, rules, fmt.Errorf("not a version 1 or 2 stat cache")
	}
	if len(b) < hdr+4+4 {
		return indexBody{}, rules, fmt.Errorf("truncated")
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, castagnoli()) != sum {
		return indexBody{}, rules, fmt.Errorf("checksum mismatch")
	}
	if hdr > len(indexMagic) {
		copy(rules[:], body[len(indexMagic):hdr])
	}
	// The paths are substrings of b itself, not copies: b is the index file as read, which no
	// one writes to afterwards (callers pass a buffer they hand over), and copying it would cost
	// as much again as the file (2 MB for 20,000 files) on every capture.
	all := unsafe.String(unsafe.SliceData(body), len(body))
	r := body[hdr:]
	count := binary.LittleEndian.Uint32(r)
	r = r[4:]
	if uint64(count) > uint64(len(r))/(2+fixed) {
		return indexBody{}, rules, fmt.Errorf("count %d exceeds the file", count)
	}
	first := len(body) - len(r)
	prev := ""
	for i := range int(count) {
		if len(r) < 2 {
			return indexBody{}, rules, fmt.Errorf("truncated")
		}
		pl := int(binary.LittleEndian.Uint16(r))
		r = r[2:]
		if len(r) < pl+fixed {
			return indexBody{}, rules, fmt.Errorf("truncated")
		}
		at := len(body) - len(r)
		p := all[at : at+pl]
		if i > 0 && prev >= p {
			return indexBody{}, rules, fmt.Errorf("entries not sorted at %q", p)
		}
		prev = p
		r = r[pl+fixed:]
	}
	if len(r) != 0 {
		return indexBody{}, rules, fmt.Errorf("%d trailing bytes", len(r))
	}
	return indexBody{b: body, all: all, at: first, count: int(count)}, rules, nil
}

// writeIndex saves the stat cache of a capture when it changed: the changed entries appended to
// the log when the capture's cache had an index made under the same rules and the log stays
// under a quarter of it, else a new index.
func (s *Store) writeIndex(c *capture) error {
	if !c.indexDirty {
		return nil
	}
	entries := c.indexEntries()
	old := c.index
	if old == nil || old.base == 0 || old.logTorn || c.distrusted || old.rules != c.rules {
		return s.saveIndex(entries, c.rules)
	}
	old.decode()
	set, removed := indexChanges(old.entries, entries)
	if len(set) == 0 && len(removed) == 0 {
		return nil
	}
	body := encodeLogRecord(set, removed)
	if int64(old.logSize+len(body)) > max(old.size/4, 64<<10) {
		return s.saveIndex(entries, c.rules)
	}
	if err := appendIndexLog(filepath.Join(s.state, "index"), old.base, body); err != nil {
		return fmt.Errorf("write stat cache: %w", err)
	}
	return nil
}

// indexEntries returns the stat cache a capture leaves: its files, and, when its trees were
// encoded under rules with a key, its directories with their trees (treecache.go), sorted.
func (c *capture) indexEntries() []indexEntry {
	var entries []indexEntry
	dirs := c.trees != nil && c.rulesOK && c.rootSt.Mode != 0 // a full walk's, see captureLiveRules
	if h, ok := c.trees[""]; ok && dirs && c.rootSt.Mode != 0 {
		entries = append(entries, indexEntry{Path: "", St: c.rootSt, Blob: h})
	}
	for i := range c.scan.entries {
		switch e := &c.scan.entries[i]; e.Type {
		case TypeFile:
			entries = append(entries, indexEntry{Path: e.Path, St: e.St, Blob: e.Blob})
		case TypeDir:
			if h, ok := c.trees[e.Path]; ok && dirs && e.St.Mode != 0 {
				entries = append(entries, indexEntry{Path: e.Path, St: e.St, Blob: h})
			}
		}
	}
	return entries
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

// saveIndex writes a new index of entries, whose directories' trees were made under the rules
// whose key is rules, and removes the log of the one it replaces.
func (s *Store) saveIndex(entries []indexEntry, rules Hash) error {
	name := filepath.Join(s.state, "index")
	if err := durable.WriteFileUnsynced(name, encodeIndex(entries, rules), 0o600); err != nil {
		return fmt.Errorf("write stat cache: %w", err)
	}
	// A crash before the log goes leaves a log naming the old index's checksum: ignored.
	if err := removeIndexLog(name); err != nil {
		return fmt.Errorf("write stat cache: %w", err)
	}
	return nil
}
