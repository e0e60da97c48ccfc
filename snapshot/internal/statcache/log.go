package statcache

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"slices"
	"strings"
	"unsafe"

	"github.com/agent-rewind/rewind/internal/regular"
	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
)

// The stat cache's log (FORMAT.md, "Index"): a checkpoint that changed a few files appends their
// entries to index-log instead of rewriting the whole index, so what it writes is proportional to
// what changed. The log applies to one index only (it names that index's checksum); it is folded
// into a rewritten index when it grows past a quarter of the index, or at the next full rewrite.

// LogMagic starts the log; the last byte is the format version.
const LogMagic = "RWINDLG\x01"

// logOpSet and logOpRemove say what a log entry does to the path.
const (
	logOpSet    = 's'
	logOpRemove = 'r'
)

// LogName is the log of the index file name.
func LogName(index string) string { return index + "-log" }

// EncodeLogRecord encodes one record's body: the entries set and the paths removed.
func EncodeLogRecord(set []Entry, removed []string) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(set)+len(removed)))
	for i := range set {
		b = append(b, logOpSet)
		b = appendIndexEntry(b, &set[i])
	}
	for _, p := range removed {
		b = append(b, logOpRemove)
		b = binary.LittleEndian.AppendUint16(b, uint16(len(p)))
		b = append(b, p...)
	}
	return b
}

// SealLogRecord returns the trailer of a record whose body is body, written when the log's
// mtime was sealed: the racy-clean threshold of its entries (see applyIndexLog).
func SealLogRecord(body []byte, sealed int64) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(sealed))
	sum := crc32.Update(crc32.Checksum(body, castagnoli()), castagnoli(), b)
	return binary.LittleEndian.AppendUint32(b, sum)
}

// ReadLogOps returns the outcome of the log's records per path (nil: removed), with the bytes
// of its valid records and whether a record did not apply (see applyIndexLog).
func ReadLogOps(base uint32, data []byte) (ops map[string]*Entry, valid int, torn bool) {
	hdr := len(LogMagic) + 4
	if len(data) < hdr || !bytes.Equal(data[:len(LogMagic)], []byte(LogMagic)) ||
		binary.LittleEndian.Uint32(data[len(LogMagic):]) != base {
		return nil, 0, len(data) > 0
	}
	ops = make(map[string]*Entry, len(data)/128) // an entry takes about 128 bytes
	// Paths are substrings of one string, the log as read, which no one writes to afterwards
	// (as the index's, see Decode): copying it would cost as much again as reading it.
	all := unsafe.String(unsafe.SliceData(data), len(data))
	at := hdr
	for at < len(data) {
		set, gone, n, err := DecodeLogRecord(data[at:], all[at:])
		if err != nil {
			torn = true
			break
		}
		for _, p := range gone {
			ops[p] = nil
		}
		for i := range set {
			ops[set[i].Path] = &set[i]
		}
		at += n
	}
	return ops, at, torn
}

// DecodeLogRecord decodes the record at the front of b (s is b as a string). Every set entry's
// recorded time is the record's seal.
func DecodeLogRecord(b []byte, s string) (set []Entry, removed []string, n int, err error) {
	const fixed = 8*4 + 4 + 32
	if len(b) < 4 {
		return nil, nil, 0, errors.New("truncated")
	}
	count := binary.LittleEndian.Uint32(b)
	if uint64(count) > uint64(len(b))/3 {
		return nil, nil, 0, errors.New("count exceeds the log")
	}
	at := 4
	for range count {
		if len(b) < at+3 {
			return nil, nil, 0, errors.New("truncated")
		}
		op := b[at]
		pl := int(binary.LittleEndian.Uint16(b[at+1:]))
		at += 3
		if len(b) < at+pl {
			return nil, nil, 0, errors.New("truncated")
		}
		p := s[at : at+pl]
		if p != "" && manifest.CheckPath(p) != nil { // "": the root directory (snapshot/treecache.go)
			return nil, nil, 0, fmt.Errorf("bad path %q", p)
		}
		at += pl
		switch op {
		case logOpRemove:
			removed = append(removed, p)
		case logOpSet:
			if len(b) < at+fixed {
				return nil, nil, 0, errors.New("truncated")
			}
			e := Entry{Path: p}
			decodeIndexFields(&e, b[at:])
			at += fixed
			set = append(set, e)
		default:
			return nil, nil, 0, fmt.Errorf("unknown op %q", op)
		}
	}
	if len(b) < at+12 {
		return nil, nil, 0, errors.New("truncated")
	}
	sum := crc32.Checksum(b[:at+8], castagnoli())
	if binary.LittleEndian.Uint32(b[at+8:]) != sum {
		return nil, nil, 0, errors.New("checksum mismatch")
	}
	sealed := int64(binary.LittleEndian.Uint64(b[at:]))
	for i := range set {
		set[i].Recorded = sealed
	}
	return set, removed, at + 12, nil
}

// AppendLog appends one record to the log of index (whose checksum is base), creating the
// log with its header when it does not exist. The record's seal is the log's mtime after its
// body is written: its entries were hashed before that, so an entry whose file's mtime is not
// older than the seal is racily clean, as with the index's own mtime. No fsync: a cache.
func AppendLog(index string, base uint32, body []byte) error {
	name := LogName(index)
	f, err := platform.OpenAppend(name, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := platform.Fstat(f)
	if err != nil {
		return err
	}
	if !st.IsRegular() {
		return fmt.Errorf("%s is not a regular file", name)
	}
	if st.Size == 0 {
		hdr := binary.LittleEndian.AppendUint32([]byte(LogMagic), base)
		if _, err := f.Write(hdr); err != nil {
			return err
		}
	}
	if _, err := f.Write(body); err != nil {
		return err
	}
	if st, err = platform.Fstat(f); err != nil {
		return err
	}
	if _, err := f.Write(SealLogRecord(body, st.Mtime)); err != nil {
		return err
	}
	return f.Close()
}

// ReadLog reads the log of index; a missing log is empty.
func ReadLog(index string) ([]byte, error) {
	b, err := regular.ReadFile(LogName(index))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// RemoveLog removes the log of index, if any.
func RemoveLog(index string) error {
	if err := os.Remove(LogName(index)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// Sort sorts entries by path.
func Sort(entries []Entry) {
	slices.SortFunc(entries, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
}
