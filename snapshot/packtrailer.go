package snapshot

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"path/filepath"

	"github.com/agent-rewind/rewind/internal/durable"
	"github.com/agent-rewind/rewind/internal/regular"
)

// A pack written since 2026-12 starts with packMagic and ends with its trailer: a copy of its
// index file's bytes, their length (uint64, little-endian) and packTrailerMagic (FORMAT.md,
// "Packs"). The index's name stays the commit; the trailer is what lets a pack whose index is
// gone (a crash between the pack's flush and the index's rename, an index deleted or lost) have
// it back byte for byte, instead of being taken for an interrupted write.

// packTrailerMagic ends a pack's trailer.
const packTrailerMagic = "RWPACKT\x02"

// packTrailerSize is the trailer's fixed part after the index copy: its length and the magic.
const packTrailerSize = 8 + len(packTrailerMagic)

// appendPackTrailer appends the trailer holding the index idx to b.
func appendPackTrailer(b, idx []byte) []byte {
	b = append(b, idx...)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(idx)))
	return append(b, packTrailerMagic...)
}

// orphanKind is what a pack without its index file is.
type orphanKind int

const (
	packLegacy      orphanKind = iota // written before packs had a trailer: check --repair salvages it
	packTrailed                       // its trailer holds a valid index: the index is rebuilt from it
	packInterrupted                   // it starts as a pack does but has no valid trailer: a write cut short
	packUnreadable                    // it cannot be read: left as it is, for check to report
)

// orphanPack says what the pack id, whose index file is missing, is.
type orphanPack struct {
	kind    orphanKind
	idx     []byte      // packTrailed: the index, as its file held it
	entries []packEntry // packTrailed: the index's entries
	why     string      // what is wrong with it (packInterrupted, packUnreadable)
}

// orphanPack reads the header and trailer of pack id, which has no index file.
func (o *objectStore) orphanPack(id string) orphanPack {
	name := filepath.Join(o.packDir, id+".pack")
	f, err := regular.Open(name)
	if err != nil {
		return orphanPack{kind: packUnreadable, why: err.Error()}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return orphanPack{kind: packUnreadable, why: err.Error()}
	}
	return classifyPack(f, fi.Size())
}

// classifyPack says what the pack r, of size bytes and without an index file, is.
func classifyPack(r io.ReaderAt, size int64) orphanPack {
	head := make([]byte, len(packMagic))
	n, _ := r.ReadAt(head, 0)
	if n < len(head) && string(head[:n]) == packMagic[:n] && int64(n) == size {
		// Killed between the pack's creation and its header's write: no object is in it.
		return orphanPack{kind: packInterrupted, why: fmt.Sprintf("%d bytes: cut short before its header ended", size)}
	}
	if n < len(head) || string(head) != packMagic {
		return orphanPack{kind: packLegacy}
	}
	idx, entries, why := readPackTrailer(r, size)
	if why != "" {
		return orphanPack{kind: packInterrupted, why: why}
	}
	return orphanPack{kind: packTrailed, idx: idx, entries: entries}
}

// readPackTrailer returns the index the trailer of the pack f (of size bytes) holds, verified
// as a whole index is (decodePackIdx: checksum, order, every object inside the pack before the
// trailer), or why there is none.
func readPackTrailer(f io.ReaderAt, size int64) ([]byte, []packEntry, string) {
	if size < int64(len(packMagic)+packTrailerSize) {
		return nil, nil, fmt.Sprintf("%d bytes: too short to end with a trailer", size)
	}
	tail := make([]byte, packTrailerSize)
	if _, err := f.ReadAt(tail, size-int64(packTrailerSize)); err != nil {
		return nil, nil, err.Error()
	}
	if !bytes.Equal(tail[8:], []byte(packTrailerMagic)) {
		return nil, nil, "it does not end with a trailer (a write cut short)"
	}
	n := binary.LittleEndian.Uint64(tail)
	data := size - int64(packTrailerSize) // where the index copy ends
	if n > uint64(data-int64(len(packMagic))) {
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

// writeIdxBytes writes the index file of pack id, durably.
func (o *objectStore) writeIdxBytes(id string, idx []byte) error {
	return durable.WriteFile(filepath.Join(o.packDir, id+".idx"), idx, 0o600)
}
