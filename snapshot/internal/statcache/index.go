package statcache

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"iter"
	"slices"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"github.com/agent-rewind/rewind/internal/regular"
	"github.com/agent-rewind/rewind/snapshot/internal/objects"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
)

// Magic starts the stat cache file; the last byte is the format version. Version 2 adds
// the exclusion rules' key to the header and directory entries (the snapshot package's treecache.go); version 1 files
// are still read (they hold files only).
const (
	Magic   = "RWINDEX\x02"
	MagicV1 = "RWINDEX\x01"
)

// Entry is one file of the stat cache: its stat at the time it was hashed, and the hash; or
// one directory (St.Mode a directory's; "" is the root): its stat when its tree was encoded, and
// the tree's hash (the snapshot package's treecache.go).
type Entry struct {
	Path string
	St   platform.Stat
	Blob objects.Hash
	// Recorded is the mtime (ns) of the index file, or the seal of the log record, that holds
	// the entry: an entry whose St.Mtime is not older is racily clean and is hashed again.
	Recorded int64
}

// Index is the stat cache (FORMAT.md, "Index"): the index with its log applied.
type Index struct {
	Entries  []Entry // sorted by path; empty while body holds them (see LoadLazy)
	Body     *Body   // the index's entries still encoded, checked, each recorded at recorded
	Recorded int64
	overlay  []logOp      // with body: the log's outcome, by path, which the cursor applies
	Base     uint32       // the index file's checksum (what its log must name); 0 without one
	Size     int64        // the index file's bytes
	LogSize  int          // the bytes of the log's valid records, its header included
	LogTorn  bool         // the log holds a record that does not apply: rewrite the index
	Rules    objects.Hash // the key of the exclusion rules its directory entries were made under
}

// Clean reports whether a file whose lstat is st can reuse e's hash without being read.
func (x *Index) Clean(e *Entry, st platform.Stat) bool {
	return e != nil && e.St == st && e.St.Mtime < e.Recorded
}

// Load reads the stat cache. A missing file gives an empty index; a damaged one gives an
// empty index and a warning (it is a cache: every file is simply hashed again).
func Load(name string) (*Index, string, error) {
	x, warn, err := LoadLazy(name)
	if x != nil {
		x.Decode()
	}
	return x, warn, err
}

// LoadLazy is Load leaving an index without a log encoded, checked, for a capture to
// read in place (cursor): decoding it first would fill 96 bytes a path (2 MB for 20,000 files)
// that a no-change checkpoint reads once.
func LoadLazy(name string) (*Index, string, error) {
	data, err := regular.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return &Index{}, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("read stat cache %s: %w", name, err)
	}
	st, err := platform.Lstat(name)
	if err != nil {
		return nil, "", fmt.Errorf("stat %s: %w", name, err)
	}
	body, rules, err := Check(data)
	if err != nil {
		return &Index{}, fmt.Sprintf("stat cache %s ignored (%v): every file was read again", name, err), nil
	}
	x := &Index{Body: &body, Recorded: st.Mtime, Rules: rules, Base: binary.LittleEndian.Uint32(data[len(data)-4:]), Size: int64(len(data))}
	log, err := ReadLog(name)
	if err != nil {
		return nil, "", fmt.Errorf("read stat cache %s: %w", LogName(name), err)
	}
	if log != nil {
		var ops map[string]*Entry
		ops, x.LogSize, x.LogTorn = ReadLogOps(x.Base, log)
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
	e    *Entry
}

// Decode decodes the entries body still holds, with the overlay applied.
func (x *Index) Decode() {
	if x.Body == nil {
		return
	}
	entries := make([]Entry, 0, x.Body.Count+len(x.overlay))
	for c := x.Cursor(); c.Entry() != nil; c.Advance() {
		entries = append(entries, *c.Entry())
	}
	x.Entries, x.Body, x.overlay = entries, nil, nil
}

// Cursor reads a stat cache's entries in order: decoded, or in place with the log's
// outcome merged in.
type Cursor struct {
	x     *Index
	j     int  // the next decoded entry
	Body  Body // the encoded entries not read yet
	Base  Entry
	bok   bool    // base holds the next encoded entry
	ops   []logOp // the overlay not applied yet
	cur   Entry
	ok    bool
	Count int // the entries the cursor has been at
}

// Cursor returns a cursor at x's first entry.
func (x *Index) Cursor() *Cursor {
	c := &Cursor{x: x}
	if x.Body != nil {
		c.Body, c.ops = *x.Body, x.overlay
		c.nextBase()
	}
	c.Advance()
	return c
}

// Entry returns the entry at the cursor, nil past the last; advance overwrites it.
func (c *Cursor) Entry() *Entry {
	if !c.ok {
		return nil
	}
	return &c.cur
}

// Advance moves the cursor to the next entry.
func (c *Cursor) Advance() {
	c.ok = c.step()
	if c.ok {
		c.Count++
	}
}

func (c *Cursor) step() bool {
	if c.x.Body == nil {
		if c.j >= len(c.x.Entries) {
			return false
		}
		c.cur = c.x.Entries[c.j]
		c.j++
		return true
	}
	for len(c.ops) > 0 && (!c.bok || c.ops[0].path <= c.Base.Path) {
		op := c.ops[0]
		c.ops = c.ops[1:]
		if c.bok && op.path == c.Base.Path {
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
	c.cur = c.Base
	c.nextBase()
	return true
}

// nextBase reads the next encoded entry into base.
func (c *Cursor) nextBase() {
	if c.bok = c.Body.Count > 0; c.bok {
		c.Body.next(&c.Base)
		c.Base.Recorded = c.x.Recorded
	}
}

// Encode encodes sorted entries made under the exclusion rules whose key is rules.
func Encode(entries []Entry, rules objects.Hash) []byte {
	n := len(Magic) + 32 + 4 + 4
	for i := range entries {
		n += 2 + len(entries[i].Path) + 8*4 + 4 + 32
	}
	b := make([]byte, 0, n)
	b = append(b, Magic...)
	b = append(b, rules[:]...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(entries)))
	for i := range entries {
		b = appendIndexEntry(b, &entries[i])
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli()))
}

// appendIndexEntry appends one entry as the index and its log encode it.
func appendIndexEntry(b []byte, e *Entry) []byte {
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
func decodeIndexFields(e *Entry, r []byte) {
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

// Decode decodes and checks an index file's bytes (version 1 or 2), and returns the key of
// the rules its directory entries were made under (zero for version 1, which has none). The
// entries' paths point into b, which must not be modified afterwards.
func Decode(b []byte) ([]Entry, objects.Hash, error) {
	body, rules, err := Check(b)
	if err != nil {
		return nil, rules, err
	}
	entries := make([]Entry, body.Count)
	for i := range entries {
		body.next(&entries[i])
	}
	return entries, rules, nil
}

// Body is the entries of a checked index file, still encoded: next decodes them in order.
type Body struct {
	b     []byte // the file's bytes but its checksum
	all   string // b as a string: paths are substrings of it
	at    int    // where the next entry starts
	Count int    // the entries left
}

// next decodes the next entry into e; the body must have one left (count > 0).
func (r *Body) next(e *Entry) {
	const fixed = 8*4 + 4 + 32
	pl := int(binary.LittleEndian.Uint16(r.b[r.at:]))
	at := r.at + 2
	e.Path = r.all[at : at+pl]
	decodeIndexFields(e, r.b[at+pl:])
	r.at = at + pl + fixed
	r.Count--
}

// Check checks an index file's bytes (version 1 or 2): its magic, checksum, every entry's
// length, the entries' order and nothing after them; it returns its entries, still encoded, and
// the key of the rules its directory entries were made under (zero for version 1, which has
// none). The entries' paths point into b, which must not be modified afterwards.
func Check(b []byte) (Body, objects.Hash, error) {
	const fixed = 8*4 + 4 + 32
	var rules objects.Hash
	hdr := len(Magic) + 32
	switch {
	case len(b) >= len(MagicV1) && bytes.Equal(b[:len(MagicV1)], []byte(MagicV1)):
		hdr = len(MagicV1)
	case len(b) >= len(Magic) && bytes.Equal(b[:len(Magic)], []byte(Magic)):
	default:
		return Body{}, rules, fmt.Errorf("not a version 1 or 2 stat cache")
	}
	if len(b) < hdr+4+4 {
		return Body{}, rules, fmt.Errorf("truncated")
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, castagnoli()) != sum {
		return Body{}, rules, fmt.Errorf("checksum mismatch")
	}
	if hdr > len(Magic) {
		copy(rules[:], body[len(Magic):hdr])
	}
	// The paths are substrings of b itself, not copies: b is the index file as read, which no
	// one writes to afterwards (callers pass a buffer they hand over), and copying it would cost
	// as much again as the file (2 MB for 20,000 files) on every capture.
	all := unsafe.String(unsafe.SliceData(body), len(body))
	r := body[hdr:]
	count := binary.LittleEndian.Uint32(r)
	r = r[4:]
	if uint64(count) > uint64(len(r))/(2+fixed) {
		return Body{}, rules, fmt.Errorf("count %d exceeds the file", count)
	}
	first := len(body) - len(r)
	prev := ""
	for i := range int(count) {
		if len(r) < 2 {
			return Body{}, rules, fmt.Errorf("truncated")
		}
		pl := int(binary.LittleEndian.Uint16(r))
		r = r[2:]
		if len(r) < pl+fixed {
			return Body{}, rules, fmt.Errorf("truncated")
		}
		at := len(body) - len(r)
		p := all[at : at+pl]
		if i > 0 && prev >= p {
			return Body{}, rules, fmt.Errorf("entries not sorted at %q", p)
		}
		prev = p
		r = r[pl+fixed:]
	}
	if len(r) != 0 {
		return Body{}, rules, fmt.Errorf("%d trailing bytes", len(r))
	}
	return Body{b: body, all: all, at: first, Count: int(count)}, rules, nil
}

// Changes returns what turns the cache old into new (both in path order): the entries that
// are new, changed, or were racily clean (recorded again, so that they become clean), and the
// paths removed.
func Changes(old *Cursor, new iter.Seq[Entry]) (set []Entry, removed []string) {
	for n := range new {
		o := old.Entry()
		for ; o != nil && o.Path < n.Path; o = old.Entry() {
			removed = append(removed, o.Path)
			old.Advance()
		}
		if o != nil && o.Path == n.Path {
			same := o.St == n.St && o.Blob == n.Blob && o.St.Mtime < o.Recorded
			old.Advance()
			if same {
				continue
			}
		}
		set = append(set, n)
	}
	for o := old.Entry(); o != nil; o = old.Entry() {
		removed = append(removed, o.Path)
		old.Advance()
	}
	return set, removed
}

// IsDir reports whether a stat cache entry is a directory's (its Blob is a tree).
func IsDir(e *Entry) bool { return e.St.Mode&syscall.S_IFMT == syscall.S_IFDIR }

// Settled returns the entries that keep accepts and that are not racily clean: written to a new
// index (whose own mtime is later), a racily clean entry would pass for clean without being read.
func (x *Index) Settled(keep func(*Entry) bool) []Entry {
	var out []Entry
	for i := range x.Entries {
		if e := &x.Entries[i]; e.St.Mtime < e.Recorded && keep(e) {
			out = append(out, *e)
		}
	}
	return out
}
