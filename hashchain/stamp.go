package hashchain

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"os"
	"strings"
)

// The stamp (FORMAT.md §8.1) lets a writer trust everything before the chain's tail without
// rereading it: it names the exact chain file that was last verified whole, by identity (device,
// inode), length and change time. Any write to the file, by anyone, moves its ctime, which an
// unprivileged process cannot set back; so a file whose stamp still matches is the file that
// was verified (or appended to by a writer that had verified it). Any other file is verified
// whole once, then stamped again.
//
// The stamp is a cache: it is written in place without fsync, and a missing, torn or stale stamp
// costs one full verification, never a wrong answer.

// stampPath names the stamp beside a chain file.
func stampPath(chain string) string { return strings.TrimSuffix(chain, ".jsonl") + ".stamp" }

// fileID is what identifies one state of the chain file.
type fileID struct {
	Dev, Ino uint64
	Size     int64
	Ctime    int64 // ns since the epoch
}

// stamp says: the chain file in state ID was verified whole, and holds N entries ending in Last.
type stamp struct {
	ID   fileID
	N    int64
	Last [32]byte
}

const stampMagic = "RWSTAMP\x01"

// stampLen is the encoded size: magic, 4 × uint64 of ID, N, Last, then a SHA-256 of all that.
const stampLen = len(stampMagic) + 5*8 + 32 + 32

func (s stamp) encode() []byte {
	b := make([]byte, 0, stampLen)
	b = append(b, stampMagic...)
	b = binary.LittleEndian.AppendUint64(b, s.ID.Dev)
	b = binary.LittleEndian.AppendUint64(b, s.ID.Ino)
	b = binary.LittleEndian.AppendUint64(b, uint64(s.ID.Size))
	b = binary.LittleEndian.AppendUint64(b, uint64(s.ID.Ctime))
	b = binary.LittleEndian.AppendUint64(b, uint64(s.N))
	b = append(b, s.Last[:]...)
	sum := sha256.Sum256(b)
	return append(b, sum[:]...)
}

// decodeStamp parses a stamp; ok is false for anything else (a torn or foreign file).
func decodeStamp(b []byte) (s stamp, ok bool) {
	if len(b) != stampLen || !bytes.HasPrefix(b, []byte(stampMagic)) {
		return s, false
	}
	body := b[:stampLen-32]
	if sum := sha256.Sum256(body); !bytes.Equal(sum[:], b[stampLen-32:]) {
		return s, false
	}
	p := body[len(stampMagic):]
	u := func(i int) uint64 { return binary.LittleEndian.Uint64(p[8*i:]) }
	s.ID = fileID{Dev: u(0), Ino: u(1), Size: int64(u(2)), Ctime: int64(u(3))}
	s.N = int64(u(4))
	copy(s.Last[:], p[40:72])
	return s, true
}

// readStamp returns the stamp in f; ok is false when there is none that parses.
func readStamp(f *os.File) (stamp, bool) {
	b := make([]byte, stampLen)
	if _, err := f.ReadAt(b, 0); err != nil {
		return stamp{}, false
	}
	return decodeStamp(b)
}

// writeStamp replaces the stamp in f. Errors are dropped on purpose: a stamp that is not written
// only makes the next writer verify the chain whole.
func writeStamp(f *os.File, s stamp) {
	f.WriteAt(s.encode(), 0)
}
