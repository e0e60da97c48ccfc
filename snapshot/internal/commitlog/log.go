package commitlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
)

// File is one file of a record: its name relative to the store, with forward slashes, and all
// of its content.
type File struct {
	Name string
	Data []byte
}

// Record is what one commit wrote, in the order it writes the files.
type Record struct{ Files []File }

// Find returns the content of the file named name in r.
func (r Record) Find(name string) ([]byte, bool) {
	for _, f := range r.Files {
		if f.Name == name {
			return f.Data, true
		}
	}
	return nil, false
}

const (
	headerPrefix = "agent-rewind log 1 "
	bootLen      = 36
	HeaderSize   = len(headerPrefix) + bootLen + 1
	recordMagic  = "REC1"
	// MaxRecord bounds a record's payload: a commit bigger than this is written the old way.
	MaxRecord = 64 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrFormat is a log whose header is not this format's.
var ErrFormat = errors.New("not an agent-rewind commit log")

// Log is an open commit log. Its methods are called under the store's lock.
type Log struct {
	f    *os.File
	boot string // the header's
	size int64
}

// Open opens (or creates, with a header naming boot) the log at name. A log that is only a torn
// header (a writer stopped while creating it) is created again.
func Open(name, boot string) (*Log, error) {
	if len(boot) != bootLen {
		return nil, fmt.Errorf("boot id %q is not %d characters", boot, bootLen)
	}
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	l := &Log{f: f, size: st.Size()}
	if l.size < int64(HeaderSize) {
		if err := l.reset(boot); err != nil {
			f.Close()
			return nil, err
		}
		return l, nil
	}
	var h [HeaderSize]byte
	if _, err := f.ReadAt(h[:], 0); err != nil {
		f.Close()
		return nil, err
	}
	if !strings.HasPrefix(string(h[:]), headerPrefix) || h[HeaderSize-1] != '\n' {
		f.Close()
		return nil, fmt.Errorf("%s: %w (its first line is %q): move it aside and run agent-rewind check", name, ErrFormat, strings.SplitN(string(h[:]), "\n", 2)[0])
	}
	l.boot = string(h[len(headerPrefix) : HeaderSize-1])
	if err := l.dropTorn(); err != nil {
		f.Close()
		return nil, err
	}
	return l, nil
}

// dropTorn cuts a torn last record (its writer stopped before the sync returned: it never
// committed), so that the next record is appended right after the last committed one.
func (l *Log) dropTorn() error {
	if _, ok, err := l.Last(); err != nil || ok || l.Empty() {
		return err
	}
	end := int64(HeaderSize)
	b := make([]byte, l.size-end)
	if _, err := l.f.ReadAt(b, end); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	for len(b) > 0 {
		_, n, err := Decode(b)
		if err != nil {
			break
		}
		end += int64(n)
		b = b[n:]
	}
	if err := l.f.Truncate(end); err != nil {
		return err
	}
	l.size = end
	return nil
}

// HeaderBoot returns the boot id the header of the log at name names, reading nothing else: ""
// when the log is missing or holds no record. Open uses it to tell a restart cheaply.
func HeaderBoot(name string) (string, error) {
	f, err := os.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	} else if err != nil {
		return "", err
	}
	defer f.Close()
	var h [HeaderSize + 1]byte
	n, err := f.ReadAt(h[:], 0)
	if n <= HeaderSize {
		return "", nil // no record after the header (or a torn header: Open makes it again)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	if !strings.HasPrefix(string(h[:]), headerPrefix) || h[HeaderSize-1] != '\n' {
		return "", fmt.Errorf("%s: %w: move it aside and run agent-rewind check", name, ErrFormat)
	}
	return string(h[len(headerPrefix) : HeaderSize-1]), nil
}

// Close closes the file.
func (l *Log) Close() error { return l.f.Close() }

// Boot is the boot id the header names: the boot in which the records were written.
func (l *Log) Boot() string { return l.boot }

// Empty reports whether the log holds no record (nor a torn one).
func (l *Log) Empty() bool { return l.size <= int64(HeaderSize) }

// Size is the log's length in bytes.
func (l *Log) Size() int64 { return l.size }

// Reset empties the log, durably, and names boot in its header.
func (l *Log) Reset(boot string) error { return l.reset(boot) }

func (l *Log) reset(boot string) error {
	if err := l.f.Truncate(0); err != nil {
		return err
	}
	if _, err := l.f.WriteAt([]byte(headerPrefix+boot+"\n"), 0); err != nil {
		return err
	}
	if err := l.f.Sync(); err != nil {
		return err
	}
	l.boot, l.size = boot, int64(HeaderSize)
	return nil
}

// Append writes r at the end of the log and makes it durable (one fdatasync): the commit. The
// header must name this boot (Reset it first when the log is empty and it does not).
func (l *Log) Append(r Record) error {
	b, err := Encode(r)
	if err != nil {
		return err
	}
	if _, err := l.f.WriteAt(b, l.size); err != nil {
		l.f.Truncate(l.size) // a torn record would be ignored anyway: leave none
		return err
	}
	if err := datasync(l.f); err != nil {
		return err
	}
	l.size += int64(len(b))
	return nil
}

// Encode returns r framed as one record.
func Encode(r Record) ([]byte, error) {
	n := 4
	for _, f := range r.Files {
		if !validName(f.Name) {
			return nil, fmt.Errorf("commit log: file name %q is not a clean relative path", f.Name)
		}
		n += 2 + len(f.Name) + 4 + len(f.Data)
	}
	if n > MaxRecord {
		return nil, fmt.Errorf("commit log: a record of %d bytes is over %d", n, MaxRecord)
	}
	b := make([]byte, 0, 8+n+8)
	b = append(b, recordMagic...)
	b = binary.LittleEndian.AppendUint32(b, uint32(n))
	start := len(b)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(r.Files)))
	for _, f := range r.Files {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(f.Name)))
		b = append(b, f.Name...)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(f.Data)))
		b = append(b, f.Data...)
	}
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b[start:], castagnoli))
	return binary.LittleEndian.AppendUint32(b, uint32(n)), nil
}

func validName(n string) bool {
	return n != "" && len(n) < 1<<16 && path.Clean(n) == n && !path.IsAbs(n) && n != ".." && !strings.HasPrefix(n, "../") && !strings.ContainsRune(n, '\\')
}

// Records returns every committed record, in order, stopping at the first torn one.
func (l *Log) Records() ([]Record, error) {
	b := make([]byte, l.size-int64(HeaderSize))
	if _, err := l.f.ReadAt(b, int64(HeaderSize)); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	var out []Record
	for len(b) > 0 {
		r, n, err := Decode(b)
		if err != nil {
			break // torn: never committed
		}
		out = append(out, r)
		b = b[n:]
	}
	return out, nil
}

// Last returns the last record, found from the end of the file; ok is false when the log is
// empty or its last record is torn (its writer stopped before the commit).
func (l *Log) Last() (r Record, ok bool, err error) {
	if l.Empty() || l.size < int64(HeaderSize)+16 {
		return Record{}, false, nil
	}
	var t [4]byte
	if _, err := l.f.ReadAt(t[:], l.size-4); err != nil {
		return Record{}, false, err
	}
	n := int64(binary.LittleEndian.Uint32(t[:]))
	start := l.size - 16 - n
	if n > MaxRecord || start < int64(HeaderSize) {
		return Record{}, false, nil
	}
	b := make([]byte, l.size-start)
	if _, err := l.f.ReadAt(b, start); err != nil {
		return Record{}, false, err
	}
	r, used, err := Decode(b)
	if err != nil || used != len(b) {
		return Record{}, false, nil
	}
	return r, true, nil
}

// LastEndsWith reports whether the log's last record ends with the file f, reading only that
// file's bytes and the record's trailer, not the record (which can hold a pack): a writer that
// puts a record's files in place in order and finds the last one there knows all of them are.
func (l *Log) LastEndsWith(f File) (bool, error) {
	k := int64(2 + len(f.Name) + 4 + len(f.Data) + 8)
	if l.size-k < int64(HeaderSize)+12 {
		return false, nil
	}
	b := make([]byte, k)
	if _, err := l.f.ReadAt(b, l.size-k); err != nil {
		return false, err
	}
	want := binary.LittleEndian.AppendUint16(make([]byte, 0, k), uint16(len(f.Name)))
	want = append(want, f.Name...)
	want = binary.LittleEndian.AppendUint32(want, uint32(len(f.Data)))
	want = append(want, f.Data...)
	return string(b[:len(want)]) == string(want), nil
}

// Decode reads one record at the start of b and returns it and the bytes it took.
func Decode(b []byte) (Record, int, error) {
	bad := func(why string) (Record, int, error) { return Record{}, 0, errors.New("commit log record: " + why) }
	if len(b) < 8 || string(b[:4]) != recordMagic {
		return bad("no record here")
	}
	n := int(binary.LittleEndian.Uint32(b[4:8]))
	if n < 4 || n > MaxRecord || len(b) < 8+n+8 {
		return bad("ends early")
	}
	p := b[8 : 8+n]
	if crc32.Checksum(p, castagnoli) != binary.LittleEndian.Uint32(b[8+n:]) || int(binary.LittleEndian.Uint32(b[8+n+4:])) != n {
		return bad("checksum or length does not match")
	}
	count := int(binary.LittleEndian.Uint32(p))
	p = p[4:]
	var r Record
	for range count {
		if len(p) < 2 {
			return bad("ends early")
		}
		nl := int(binary.LittleEndian.Uint16(p))
		if len(p) < 2+nl+4 {
			return bad("ends early")
		}
		name := string(p[2 : 2+nl])
		dl := int(binary.LittleEndian.Uint32(p[2+nl:]))
		p = p[2+nl+4:]
		if dl > len(p) || !validName(name) {
			return bad("a file's name or length is wrong")
		}
		r.Files = append(r.Files, File{Name: name, Data: p[:dl:dl]})
		p = p[dl:]
	}
	if len(p) != 0 {
		return bad("bytes after its files")
	}
	return r, 8 + n + 8, nil
}
