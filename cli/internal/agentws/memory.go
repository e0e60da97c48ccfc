package agentws

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agent-rewind/rewind/internal/durable"
	"github.com/agent-rewind/rewind/internal/lockfile"
	"github.com/agent-rewind/rewind/internal/regular"
)

// MemoryFile is failure memory's file in the workspace's store.
const MemoryFile = "memory.jsonl"

// MemoryFormat is the format number every line of MemoryFile carries.
const MemoryFormat = 1

// MaxNoteLine is the longest line of MemoryFile, newline included, in bytes. A note whose line
// would be longer is refused; a longer line in the file is damage.
const MaxNoteLine = 64 << 10

// Chain entry kinds written by failure memory.
const (
	// KindMemory is the kind of the chain entry recorded for each note (data: MemoryEntry).
	KindMemory = "memory"
	// KindMemoryRecover is the kind of the chain entry recorded when a torn last line is moved
	// aside (data: TornTail without Seq).
	KindMemoryRecover = "memory_recover"
)

// Recorder appends an entry to the workspace's hash chain; *workspace.Workspace is one.
type Recorder interface {
	Record(kind string, data any) (seq int64, err error)
}

// Note is one failure note: what failed after a checkpoint, and the lesson.
type Note struct {
	Time       time.Time // when it was recorded (UTC)
	Checkpoint string    // the checkpoint it is recorded against (a full id)
	WhatFailed string    // what was tried after the checkpoint, and how it failed
	Lesson     string    // what to do differently; may be empty
	Seq        int64     // the chain entry (kind "memory") that records it
}

// noteLine is a line of MemoryFile.
type noteLine struct {
	Format     int       `json:"format"`
	Time       time.Time `json:"time"`
	Checkpoint string    `json:"checkpoint"`
	WhatFailed string    `json:"what_failed"`
	Lesson     string    `json:"lesson"`
	Seq        int64     `json:"seq"`
}

// MemoryEntry is the data of a "memory" chain entry: the note, recorded before its line is
// written (so the line can carry the entry's seq).
type MemoryEntry struct {
	Checkpoint string    `json:"checkpoint"`
	WhatFailed string    `json:"what_failed"`
	Lesson     string    `json:"lesson"`
	Time       time.Time `json:"time"`
}

// TornTail describes a torn last line of MemoryFile that was moved aside: bytes a writer left
// without their newline when it was killed mid-write (its caller was never told the note was
// recorded).
type TornTail struct {
	File    string `json:"file"`     // MemoryFile
	Offset  int64  `json:"offset"`   // where the torn line started
	Bytes   int64  `json:"bytes"`    // its length
	SHA256  string `json:"sha256"`   // hex SHA-256 of the torn bytes
	SavedAs string `json:"saved_as"` // the file in the store that keeps them
	Seq     int64  `json:"-"`        // the "memory_recover" chain entry
}

// ErrDamagedMemory is matched by the *MemoryError returned for a MemoryFile that cannot be read
// as its format says.
var ErrDamagedMemory = errors.New("failure memory is damaged")

// MemoryError names a damaged line of MemoryFile. It matches ErrDamagedMemory.
type MemoryError struct {
	Path   string
	Line   int   // 1-based
	Offset int64 // of the line's first byte
	Reason string
}

func (e *MemoryError) Error() string {
	return fmt.Sprintf("failure memory %s is damaged at line %d (byte %d): %s; notes cannot be read or added until it is fixed: move the file aside or repair that line (every note is also on the hash chain, kind %q)",
		e.Path, e.Line, e.Offset, e.Reason, KindMemory)
}

// Is makes a MemoryError match ErrDamagedMemory.
func (e *MemoryError) Is(target error) bool { return target == ErrDamagedMemory }

// Memory is the failure memory of one workspace: MemoryFile in its state directory. It is safe
// for concurrent use by goroutines and processes: appends and repairs hold an exclusive flock(2)
// on the file itself; reads take no lock unless they meet an unfinished line.
type Memory struct {
	path string
	rec  Recorder
	// OnRecover, when set, is called after a torn last line was moved aside and recorded.
	OnRecover func(TornTail)
}

// OpenMemory returns the failure memory in stateDir (the workspace's store), recording
// through rec. It does no I/O: the file is created by the first Add.
func OpenMemory(stateDir string, rec Recorder) *Memory {
	return &Memory{path: filepath.Join(stateDir, MemoryFile), rec: rec}
}

// Path returns the memory file's path.
func (m *Memory) Path() string { return m.path }

// Notes returns every note, oldest first. A missing file holds no notes. A torn last line (a
// writer killed mid-write) is moved aside and recorded first (see TornTail); a damaged line is a
// *MemoryError.
func (m *Memory) Notes() ([]Note, error) {
	data, err := regular.ReadFile(m.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read failure memory: %w", err)
	}
	notes, torn, err := parseMemory(m.path, data)
	if err != nil || torn < 0 {
		return notes, err
	}
	// The tail may be an append in flight (readers take no lock): look again under the lock,
	// which waits for the writer, and repair it only if it is still there.
	f, err := regular.OpenFile(m.path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("open failure memory: %w", err)
	}
	defer f.Close()
	if err := flock(f); err != nil {
		return nil, err
	}
	notes, _, err = m.loadLocked(f)
	return notes, err
}

// Add records a note against checkpoint (a full id, which the caller has resolved): first on
// the chain (kind "memory"), then as a line of MemoryFile carrying the entry's seq, written with
// one O_APPEND write and fsynced, under the file's exclusive lock. It returns the note and every
// note now in the file, oldest first, the new one last.
//
// If the chain entry is recorded but the line cannot be written, the error says so: the note is
// then on the chain only.
func (m *Memory) Add(checkpoint, whatFailed, lesson string) (Note, []Note, error) {
	if strings.TrimSpace(whatFailed) == "" {
		return Note{}, nil, errors.New("a failure note needs what_failed: say what was tried and how it failed")
	}
	if !utf8.ValidString(whatFailed) || !utf8.ValidString(lesson) {
		return Note{}, nil, errors.New("a failure note must be valid UTF-8")
	}
	if !validCheckpointID(checkpoint) {
		return Note{}, nil, fmt.Errorf("failure note against %q: not a full checkpoint id (12 lowercase hex digits)", checkpoint)
	}
	n := Note{Time: time.Now().UTC(), Checkpoint: checkpoint, WhatFailed: whatFailed, Lesson: lesson}
	if line, err := encodeNote(n); err != nil {
		return Note{}, nil, err
	} else if len(line) > MaxNoteLine {
		return Note{}, nil, fmt.Errorf("failure note is %d bytes as a line, more than %d: shorten what_failed or lesson", len(line), MaxNoteLine)
	}

	f, err := durable.OpenAppend(m.path)
	if err != nil {
		return Note{}, nil, fmt.Errorf("open failure memory: %w", err)
	}
	defer f.Close()
	if err := flock(f); err != nil {
		return Note{}, nil, err
	}
	notes, size, err := m.loadLocked(f)
	if err != nil {
		return Note{}, nil, err
	}
	seq, err := m.rec.Record(KindMemory, MemoryEntry{Checkpoint: n.Checkpoint, WhatFailed: n.WhatFailed, Lesson: n.Lesson, Time: n.Time})
	if err != nil {
		return Note{}, nil, fmt.Errorf("record the failure note on the hash chain (nothing was written): %w", err)
	}
	n.Seq = seq
	line, err := encodeNote(n)
	if err == nil {
		var k int
		k, err = f.Write(line)
		if err == nil && k != len(line) {
			err = io.ErrShortWrite
		}
		if err != nil {
			// Take back a partial line so the file stays whole lines.
			if terr := f.Truncate(size); terr != nil {
				err = fmt.Errorf("%w; removing the partial line also failed: %v", err, terr)
			}
		}
	}
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		return Note{}, nil, fmt.Errorf("the failure note is on the hash chain (entry %d) but writing it to %s failed: %w", seq, m.path, err)
	}
	return n, append(notes, n), nil
}

// loadLocked reads and parses the file through f, which holds the exclusive lock, moving a torn
// last line aside first. It returns the notes and the file's size after any repair.
func (m *Memory) loadLocked(f *os.File) ([]Note, int64, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, 0, err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, 0, fmt.Errorf("read failure memory: %w", err)
	}
	notes, torn, err := parseMemory(m.path, data)
	if err != nil {
		return nil, 0, err
	}
	if torn < 0 {
		return notes, int64(len(data)), nil
	}
	if err := m.moveAside(f, data, torn); err != nil {
		return nil, 0, err
	}
	return notes, torn, nil
}

// moveAside saves data[torn:] as memory.torn-<offset>-<sha256 prefix> (durably), records a
// "memory_recover" entry, then truncates the file to torn. A crash between the steps repeats
// them on the next call, to the same saved file.
func (m *Memory) moveAside(f *os.File, data []byte, torn int64) error {
	tail := data[torn:]
	sum := sha256.Sum256(tail)
	t := TornTail{File: MemoryFile, Offset: torn, Bytes: int64(len(tail)), SHA256: hex.EncodeToString(sum[:])}
	t.SavedAs = fmt.Sprintf("memory.torn-%d-%s", torn, t.SHA256[:12])
	dir := filepath.Dir(m.path)
	if err := durable.WriteFile(filepath.Join(dir, t.SavedAs), tail, 0o600); err != nil {
		return fmt.Errorf("failure memory ends in a torn line at byte %d (a writer was killed mid-write); saving it aside failed: %w", torn, err)
	}
	seq, err := m.rec.Record(KindMemoryRecover, t)
	if err != nil {
		return fmt.Errorf("failure memory ends in a torn line at byte %d, saved as %s; recording that on the hash chain failed, so it was left in place: %w", torn, t.SavedAs, err)
	}
	t.Seq = seq
	if err := f.Truncate(torn); err != nil {
		return fmt.Errorf("failure memory: cut the torn line saved as %s: %w", t.SavedAs, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("failure memory: cut the torn line saved as %s: %w", t.SavedAs, err)
	}
	if m.OnRecover != nil {
		m.OnRecover(t)
	}
	return nil
}

// ParseMemory parses the contents of a memory file: one JSON object per line (see the package
// doc). It returns the notes, oldest first, and the offset of a torn last line (bytes after the
// last newline), or -1 when the data ends in a newline or is empty. A damaged complete line is
// a *MemoryError (Path is empty).
func ParseMemory(data []byte) (notes []Note, torn int64, err error) {
	return parseMemory("", data)
}

func parseMemory(path string, data []byte) ([]Note, int64, error) {
	var notes []Note
	off := 0
	for line := 1; off < len(data); line++ {
		nl := bytes.IndexByte(data[off:], '\n')
		if nl < 0 {
			return notes, int64(off), nil
		}
		b := data[off : off+nl]
		bad := func(format string, args ...any) error {
			return &MemoryError{Path: path, Line: line, Offset: int64(off), Reason: fmt.Sprintf(format, args...)}
		}
		if nl+1 > MaxNoteLine {
			return nil, 0, bad("the line is %d bytes, more than %d", nl+1, MaxNoteLine)
		}
		n, err := decodeNote(b)
		if err != nil {
			return nil, 0, bad("%v", err)
		}
		notes = append(notes, n)
		off += nl + 1
	}
	return notes, -1, nil
}

// decodeNote parses and checks one line (without its newline).
func decodeNote(b []byte) (Note, error) {
	if !utf8.Valid(b) {
		return Note{}, errors.New("not UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var l noteLine
	if err := dec.Decode(&l); err != nil {
		return Note{}, fmt.Errorf("not a note: %v", err)
	}
	if dec.More() {
		return Note{}, errors.New("not a note: data after the JSON object")
	}
	switch {
	case l.Format > MemoryFormat:
		return Note{}, fmt.Errorf("format %d is newer than this agent-rewind reads (%d): upgrade agent-rewind", l.Format, MemoryFormat)
	case l.Format != MemoryFormat:
		return Note{}, fmt.Errorf("format %d, want %d", l.Format, MemoryFormat)
	case !validCheckpointID(l.Checkpoint):
		return Note{}, fmt.Errorf("checkpoint %q is not a checkpoint id", l.Checkpoint)
	case strings.TrimSpace(l.WhatFailed) == "":
		return Note{}, errors.New("what_failed is empty")
	case l.Time.IsZero():
		return Note{}, errors.New("time is missing")
	case l.Seq < 0:
		return Note{}, fmt.Errorf("seq %d is negative", l.Seq)
	}
	return Note{Time: l.Time, Checkpoint: l.Checkpoint, WhatFailed: l.WhatFailed, Lesson: l.Lesson, Seq: l.Seq}, nil
}

// encodeNote returns n's line, newline included.
func encodeNote(n Note) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(noteLine{Format: MemoryFormat, Time: n.Time.UTC(), Checkpoint: n.Checkpoint, WhatFailed: n.WhatFailed, Lesson: n.Lesson, Seq: n.Seq})
	return buf.Bytes(), err
}

// validCheckpointID reports whether s is a full checkpoint id: 12 lowercase hex digits.
func validCheckpointID(s string) bool {
	if len(s) != checkpointIDLen {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// flock takes an exclusive lock (flock(2), LockFileEx) on f, waiting for any other holder.
func flock(f *os.File) error {
	if err := lockfile.Lock(f, lockfile.Exclusive); err != nil {
		return fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	return nil
}
