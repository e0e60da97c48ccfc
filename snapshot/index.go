package snapshot

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"iter"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/agent-rewind/rewind/internal/durable"
	"github.com/agent-rewind/rewind/internal/regular"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
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
	St   platform.Stat
	Blob Hash
	// recorded is the mtime (ns) of the index file, or the seal of the log record, that holds
	// the entry: an entry whose St.Mtime is not older is racily clean and is hashed again.
	recorded int64
}

// statIndex is the stat cache (FORMAT.md, "Index"): the index with its log applied.
type statIndex struct {
	entries  []indexEntry // sorted by path; empty while body holds them (see loadIndexLazy)
	body     *indexBody   // the index's entries still encoded, checked, each recorded at recorded
	recorded int64
	overlay  []logOp // with body: the log's outcome, by path, which the cursor applies
	base     uint32  // the index file's checksum (what its log must name); 0 without one
	size     int64   // the index file's bytes
	logSize  int     // the bytes of the log's valid records, its header included
	logTorn  bool    // the log holds a record that does not apply: rewrite the index
	rules    Hash    // the key of the exclusion rules its directory entries were made under
}

// clean reports whether a file whose lstat is st can reuse e's hash without being read.
func (x *statIndex) clean(e *indexEntry, st platform.Stat) bool {
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
	st, err := platform.Lstat(name)
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
		var ops map[string]*indexEntry
		ops, x.logSize, x.logTorn = readLogOps(x.base, log)
		for p, e := range ops {
			x.overlay = append(x.overlay, logOp{p, e})
		}
		slices.SortFunc(x.overlay, func(a, b logOp) int { return strings.Compare(a.path, b.path) })
	}
	return x, "", nil
}

// logOp is the log's outcome for one path: its entry, or nil when it was removed.
type logOp struct {
	path string
	e    *indexEntry
}

// decode decodes the entries body still holds, with the overlay applied.
func (x *statIndex) decode() {
	if x.body == nil {
		return
	}
	entries := make([]indexEntry, 0, x.body.count+len(x.overlay))
	for c := x.cursor(); c.entry() != nil; c.advance() {
		entries = append(entries, *c.entry())
	}
	x.entries, x.body, x.overlay = entries, nil, nil
}

// indexCursor reads a stat cache's entries in order: decoded, or in place with the log's
// outcome merged in.
type indexCursor struct {
	x     *statIndex
	j     int       // the next decoded entry
	body  indexBody // the encoded entries not read yet
	base  indexEntry
	bok   bool    // base holds the next encoded entry
	ops   []logOp // the overlay not applied yet
	cur   indexEntry
	ok    bool
	count int // the entries the cursor has been at
}

// cursor returns a cursor at x's first entry.
func (x *statIndex) cursor() *indexCursor {
	c := &indexCursor{x: x}
	if x.body != nil {
		c.body, c.ops = *x.body, x.overlay
		c.nextBase()
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
	c.ok = c.step()
	if c.ok {
		c.count++
	}
}

func (c *indexCursor) step() bool {
	if c.x.body == nil {
		if c.j >= len(c.x.entries) {
			return false
		}
		c.cur = c.x.entries[c.j]
		c.j++
		return true
	}
	for len(c.ops) > 0 && (!c.bok || c.ops[0].path <= c.base.Path) {
		op := c.ops[0]
		c.ops = c.ops[1:]
		if c.bok && op.path == c.base.Path {
			c.nextBase() // replaced or removed by the log
		}
		if op.e != nil {
			c.cur = *op.e
			return true
		}
	}
	if !c.bok {
		return false
	}
	c.cur = c.base
	c.nextBase()
	return true
}

// nextBase reads the next encoded entry into base.
func (c *indexCursor) nextBase() {
	if c.bok = c.body.count > 0; c.bok {
		c.body.next(&c.base)
		c.base.recorded = c.x.recorded
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
	old := c.index
	if old == nil || old.base == 0 || old.logTorn || c.distrusted || old.rules != c.rules {
		return s.saveIndex(c.indexEntries(), c.rules)
	}
	// Compared as both stream by, in place: a log record of a few changes does not need the
	// whole cache built, old or new (2 MB each for 20,000 files).
	set, removed := indexChanges(old.cursor(), c.eachIndexEntry)
	if len(set) == 0 && len(removed) == 0 {
		return nil
	}
	body := encodeLogRecord(set, removed)
	if int64(old.logSize+len(body)) > max(old.size/4, 64<<10) {
		return s.saveIndex(c.indexEntries(), c.rules)
	}
	if err := appendIndexLog(filepath.Join(s.state, "index"), old.base, body); err != nil {
		return fmt.Errorf("write stat cache: %w", err)
	}
	return nil
}

// indexEntries returns the stat cache a capture leaves (eachIndexEntry), sorted.
func (c *capture) indexEntries() []indexEntry {
	return slices.AppendSeq(make([]indexEntry, 0, len(c.scan.entries)+1), c.eachIndexEntry)
}

// eachIndexEntry yields the stat cache a capture leaves, in order: its files, and, when its trees
// were encoded under rules with a key, its directories with their trees (treecache.go).
func (c *capture) eachIndexEntry(yield func(indexEntry) bool) {
	dirs := c.trees != nil && c.rulesOK && c.rootSt.Mode != 0 // a full walk's, see captureLiveRules
	if h, ok := c.trees[""]; ok && dirs && c.rootSt.Mode != 0 {
		if !yield(indexEntry{Path: "", St: c.rootSt, Blob: h}) {
			return
		}
	}
	for i := range c.scan.entries {
		switch e := &c.scan.entries[i]; e.Type {
		case TypeFile:
			if !yield(indexEntry{Path: e.Path, St: e.St, Blob: e.Blob}) {
				return
			}
		case TypeDir:
			if h, ok := c.trees[e.Path]; ok && dirs && e.St.Mode != 0 {
				if !yield(indexEntry{Path: e.Path, St: e.St, Blob: h}) {
					return
				}
			}
		}
	}
}

// indexChanges returns what turns the cache old into new (both in path order): the entries that
// are new, changed, or were racily clean (recorded again, so that they become clean), and the
// paths removed.
func indexChanges(old *indexCursor, new iter.Seq[indexEntry]) (set []indexEntry, removed []string) {
	for n := range new {
		o := old.entry()
		for ; o != nil && o.Path < n.Path; o = old.entry() {
			removed = append(removed, o.Path)
			old.advance()
		}
		if o != nil && o.Path == n.Path {
			same := o.St == n.St && o.Blob == n.Blob && o.St.Mtime < o.recorded
			old.advance()
			if same {
				continue
			}
		}
		set = append(set, n)
	}
	for o := old.entry(); o != nil; o = old.entry() {
		removed = append(removed, o.Path)
		old.advance()
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
