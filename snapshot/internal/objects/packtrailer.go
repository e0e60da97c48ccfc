package objects

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"path/filepath"

	"github.com/agent-rewind/rewind/internal/durable"
	"github.com/agent-rewind/rewind/internal/regular"
)

// A pack written since 2026-12 starts with PackMagic and ends with its trailer: a copy of its
// index file's bytes, their length (uint64, little-endian) and packTrailerMagic (FORMAT.md,
// "Packs"). The index's name stays the commit; the trailer is what lets a pack whose index is
// gone (a crash between the pack's flush and the index's rename, an index deleted or lost) have
// it back byte for byte, instead of being taken for an interrupted write.

// packTrailerMagic ends a pack's trailer.
const packTrailerMagic = "RWPACKT\x02"

// PackTrailerSize is the trailer's fixed part after the index copy: its length and the magic.
const PackTrailerSize = 8 + len(packTrailerMagic)

// appendPackTrailer appends the trailer holding the index idx to b.
func appendPackTrailer(b, idx []byte) []byte {
	b = append(b, idx...)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(idx)))
	return append(b, packTrailerMagic...)
}

// OrphanKind is what a pack without its index file is.
type OrphanKind int

const (
	PackLegacy      OrphanKind = iota // written before packs had a trailer: check --repair salvages it
	PackTrailed                       // its trailer holds a valid index: the index is rebuilt from it
	PackInterrupted                   // it starts as a pack does but has no valid trailer: a write cut short
	PackUnreadable                    // it cannot be read: left as it is, for check to report
)

// OrphanPack says what the pack id, whose index file is missing, is.
type OrphanPack struct {
	Kind    OrphanKind
	Idx     []byte      // PackTrailed: the index, as its file held it
	Entries []PackEntry // PackTrailed: the index's entries
	Why     string      // what is wrong with it (PackInterrupted, PackUnreadable)
}

// Orphan reads the header and trailer of pack id, which has no index file.
func (o *Store) Orphan(id string) OrphanPack {
	name := o.PackPath(id)
	f, err := regular.Open(name)
	if err != nil {
		return OrphanPack{Kind: PackUnreadable, Why: err.Error()}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return OrphanPack{Kind: PackUnreadable, Why: err.Error()}
	}
	return classifyPack(f, fi.Size())
}

// classifyPack says what the pack r, of size bytes and without an index file, is.
func classifyPack(r io.ReaderAt, size int64) OrphanPack {
	head := make([]byte, len(PackMagic))
	n, _ := r.ReadAt(head, 0)
	if n < len(head) && string(head[:n]) == PackMagic[:n] && int64(n) == size {
		// Killed between the pack's creation and its header's write: no object is in it.
		return OrphanPack{Kind: PackInterrupted, Why: fmt.Sprintf("%d bytes: cut short before its header ended", size)}
	}
	if n < len(head) || string(head) != PackMagic {
		return OrphanPack{Kind: PackLegacy}
	}
	idx, entries, why := ReadPackTrailer(r, size)
	if why != "" {
		return OrphanPack{Kind: PackInterrupted, Why: why}
	}
	return OrphanPack{Kind: PackTrailed, Idx: idx, Entries: entries}
}

// ReadPackTrailer returns the index the trailer of the pack f (of size bytes) holds, verified
// as a whole index is (decodePackIdx: checksum, order, every object inside the pack before the
// trailer), or why there is none.
func ReadPackTrailer(f io.ReaderAt, size int64) ([]byte, []PackEntry, string) {
	if size < int64(len(PackMagic)+PackTrailerSize) {
		return nil, nil, fmt.Sprintf("%d bytes: too short to end with a trailer", size)
	}
	tail := make([]byte, PackTrailerSize)
	if _, err := f.ReadAt(tail, size-int64(PackTrailerSize)); err != nil {
		return nil, nil, err.Error()
	}
	if !bytes.Equal(tail[8:], []byte(packTrailerMagic)) {
		return nil, nil, "it does not end with a trailer (a write cut short)"
	}
	n := binary.LittleEndian.Uint64(tail)
	data := size - int64(PackTrailerSize) // where the index copy ends
	if n > uint64(data-int64(len(PackMagic))) {
		return nil, nil, fmt.Sprintf("its trailer claims %d bytes of index in a pack of %d", n, size)
	}
	idx := make([]byte, n)
	if _, err := f.ReadAt(idx, data-int64(n)); err != nil {
		return nil, nil, err.Error()
	}
	entries, err := decodePackIdx(idx, data-int64(n))
	if err != nil {
		return nil, nil, "its trailer's index: " + err.Error()
	}
	return idx, entries, ""
}

// WriteIdxBytes writes the index file of pack id, durably.
func (o *Store) WriteIdxBytes(id string, idx []byte) error {
	return durable.WriteFile(filepath.Join(o.packDir, id+".idx"), idx, 0o600)
}
