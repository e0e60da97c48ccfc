package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/agent-rewind/rewind/snapshot/internal/objects"
)

// Magic starts every manifest; the number is the format version.
const Magic = "rewind-manifest 1 "

// MaxPathLen bounds a manifest path, as PATH_MAX does on Linux.
const MaxPathLen = 4096

// EncodeManifest returns the manifest bytes for entries, which must be sorted by path and valid
// (as ParseManifest would accept them). The encoding is canonical: ParseManifest(EncodeManifest(e))
// gives e back, and equal entry lists give equal bytes, so equal workspaces share one manifest.
func EncodeManifest(entries []Entry) []byte {
	return encodeManifest(len(entries), func(i int) *Entry { return &entries[i] })
}

// encodeManifest encodes n entries given by at, so a capture is encoded without a copy.
func encodeManifest(n int, at func(int) *Entry) []byte {
	size := len(Magic) + 12
	for i := range n {
		e := at(i)
		size += len(e.Path) + len(e.Target) + len(e.Reason) + 96
	}
	b := make([]byte, 0, size)
	b = append(b, Magic...)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, '\n')
	for i := range n {
		e := at(i)
		var blob *objects.Hash
		if e.Type == TypeFile {
			blob = &e.Blob
		}
		b = AppendEntry(b, e, e.Path, blob)
	}
	return b
}

func appendOctal4(b []byte, m uint32) []byte {
	return append(b, byte('0'+m>>9&7), byte('0'+m>>6&7), byte('0'+m>>3&7), byte('0'+m&7))
}

// ErrBadManifest: a manifest is malformed or unsafe and was refused (see *ManifestError). The
// snapshot package exports it as snapshot.ErrBadManifest.
var ErrBadManifest = errors.New("manifest refused")

// ManifestError reports a manifest that was refused, and where. It matches ErrBadManifest.
type ManifestError struct {
	Entry  int    // 0-based entry index, -1 for the header
	Path   string // the entry's path when known
	Reason string
}

// Error names the entry and the reason.
func (e *ManifestError) Error() string {
	if e.Entry < 0 {
		return fmt.Sprintf("manifest refused: header: %s", e.Reason)
	}
	if e.Path != "" {
		return fmt.Sprintf("manifest refused: entry %d (%q): %s", e.Entry, e.Path, e.Reason)
	}
	return fmt.Sprintf("manifest refused: entry %d: %s", e.Entry, e.Reason)
}

// Is makes a ManifestError match ErrBadManifest.
func (e *ManifestError) Is(target error) bool { return target == ErrBadManifest }

// ParseManifest decodes and validates a manifest (FORMAT.md, "Manifests"). It refuses anything a
// restore could be tricked by: unsafe or unsorted paths, duplicates, a path under a non-directory.
// It never panics on any input.
func ParseManifest(data []byte) ([]Entry, error) {
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 || !bytes.HasPrefix(data[:nl], []byte(Magic)) {
		return nil, &ManifestError{Entry: -1, Reason: fmt.Sprintf("does not start with %q", Magic+"<count>")}
	}
	count, ok := objects.ParseCanonicalInt(string(data[len(Magic):nl]))
	if !ok {
		return nil, &ManifestError{Entry: -1, Reason: fmt.Sprintf("count %q is not a canonical decimal", data[len(Magic):nl])}
	}
	// Every entry takes at least 12 bytes: a count beyond that is a lie, refuse before allocating.
	if count > int64(len(data)-nl)/12 {
		return nil, &ManifestError{Entry: -1, Reason: fmt.Sprintf("count %d exceeds what %d bytes can hold", count, len(data))}
	}
	entries := make([]Entry, 0, count)
	// One copy of the whole manifest as a string: every path and field below is a substring of
	// it, so decoding allocates per manifest, not per entry (a 50,000-entry manifest is read on
	// every rewind).
	rest := string(data[nl+1:])
	for i := 0; int64(i) < count; i++ {
		e, n, err := parseEntryOf(rest, false)
		if err != nil {
			return nil, &ManifestError{Entry: i, Path: e.Path, Reason: err.Error()}
		}
		rest = rest[n:]
		entries = append(entries, e)
	}
	if len(rest) != 0 {
		return nil, &ManifestError{Entry: int(count), Reason: fmt.Sprintf("%d bytes after the last entry", len(rest))}
	}
	if err := checkEntries(entries); err != nil {
		return nil, err
	}
	return entries, nil
}

// checkEntries enforces what makes a list of entries a manifest a restore can trust: safe paths,
// strictly increasing, each under a directory listed before it.
func checkEntries(entries []Entry) error {
	dirs := make(map[string]struct{})
	for i := range entries {
		e := &entries[i]
		if err := CheckPath(e.Path); err != nil {
			return &ManifestError{Entry: i, Path: e.Path, Reason: err.Error()}
		}
		if i > 0 && entries[i-1].Path >= e.Path {
			if entries[i-1].Path == e.Path {
				return &ManifestError{Entry: i, Path: e.Path, Reason: "duplicate path"}
			}
			return &ManifestError{Entry: i, Path: e.Path, Reason: fmt.Sprintf("not sorted: follows %q", entries[i-1].Path)}
		}
		if j := strings.LastIndexByte(e.Path, '/'); j >= 0 {
			if _, ok := dirs[e.Path[:j]]; !ok {
				return &ManifestError{Entry: i, Path: e.Path, Reason: fmt.Sprintf("parent %q is not a directory entry of this manifest (a path may not pass through a symlink, a file or a missing directory)", e.Path[:j])}
			}
		}
		if e.Type == TypeDir {
			dirs[e.Path] = struct{}{}
		}
	}
	return nil
}

// parseEntryOf decodes one entry from the front of b, returning it and its length. The strings
// of the entry are substrings of b. In a tree (inTree) a directory's blob is its tree's hash.
func parseEntryOf(b string, inTree bool) (Entry, int, error) {
	e, pos, err := parseHead(b, inTree)
	if err != nil {
		return e, 0, err
	}
	var extra string
	if e.Path, extra, pos, err = parseNames(b, pos); err != nil {
		return e, 0, err
	}
	if err := e.setExtra(extra); err != nil {
		return e, 0, err
	}
	return e, pos, nil
}

// parseHead reads an entry's type, mode, size and blob (its first 4 space-separated fields),
// and returns where its path starts.
func parseHead(b string, inTree bool) (e Entry, pos int, err error) {
	if len(b) < 2 || b[1] != ' ' {
		return e, 0, fmt.Errorf("truncated or malformed entry")
	}
	e.Type = EntryType(b[0])
	switch e.Type {
	case TypeFile, TypeDir, TypeSymlink, TypeSkipped:
	default:
		return e, 0, fmt.Errorf("unknown type %q (want f, d, l or x)", b[0])
	}
	pos = 2
	field := func() (string, bool) {
		j := strings.IndexByte(b[pos:], ' ')
		if j < 0 || j > 80 {
			return "", false
		}
		s := b[pos : pos+j]
		pos += j + 1
		return s, true
	}
	modeS, ok1 := field()
	sizeS, ok2 := field()
	blobS, ok3 := field()
	if !ok1 || !ok2 || !ok3 {
		return e, 0, fmt.Errorf("truncated or malformed entry")
	}
	if len(modeS) != 4 || strings.Trim(modeS, "01234567") != "" {
		return e, 0, fmt.Errorf("mode %q is not 4 octal digits", modeS)
	}
	m, _ := strconv.ParseUint(modeS, 8, 32)
	e.Mode = uint32(m)
	size, ok := objects.ParseCanonicalInt(sizeS)
	if !ok {
		return e, 0, fmt.Errorf("size %q is not a canonical decimal", sizeS)
	}
	e.Size = size
	if e.Type == TypeFile || (inTree && e.Type == TypeDir) {
		h, err := objects.ParseHash(blobS)
		if err != nil {
			return e, 0, fmt.Errorf("blob: %v", err)
		}
		e.Blob = h
	} else if blobS != "-" {
		return e, 0, fmt.Errorf("a %s has no blob, found %q", e.Type, blobS)
	}
	return e, pos, nil
}

// parseNames reads the NUL-terminated path and link target (or skip reason) at pos, and
// returns where the entry ends.
func parseNames(b string, pos int) (p, extra string, end int, err error) {
	z := strings.IndexByte(b[pos:], 0)
	if z < 0 {
		return "", "", 0, fmt.Errorf("path is not NUL-terminated")
	}
	p = b[pos : pos+z]
	pos += z + 1
	z = strings.IndexByte(b[pos:], 0)
	if z < 0 {
		return p, "", 0, fmt.Errorf("link target or reason is not NUL-terminated")
	}
	return p, b[pos : pos+z], pos + z + 1, nil
}

// setExtra checks the entry's link target or skip reason, extra, against its type and size,
// and keeps it.
func (e *Entry) setExtra(extra string) error {
	switch e.Type {
	case TypeFile, TypeDir:
		if extra != "" {
			return fmt.Errorf("a %s has no link target, found %q", e.Type, extra)
		}
		if e.Type == TypeDir && e.Size != 0 {
			return fmt.Errorf("a dir has size 0, found %d", e.Size)
		}
	case TypeSymlink:
		if extra == "" || len(extra) > MaxPathLen {
			return fmt.Errorf("symlink target must be 1 to %d bytes", MaxPathLen)
		}
		if e.Size != int64(len(extra)) {
			return fmt.Errorf("symlink size %d is not its target's length %d", e.Size, len(extra))
		}
		e.Target = extra
	case TypeSkipped:
		if e.Mode != 0 || e.Size != 0 {
			return fmt.Errorf("a skipped entry has mode 0000 and size 0")
		}
		if len(extra) > 200 {
			return fmt.Errorf("skip reason longer than 200 bytes")
		}
		e.Reason = extra
	}
	return nil
}

// CheckPath enforces the path rules: relative, slash-separated, no empty, "." or ".." segment,
// no NUL, at most maxPathLen bytes. A path that passes cannot name anything outside the root.
func CheckPath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("empty path")
	case len(p) > MaxPathLen:
		return fmt.Errorf("path longer than %d bytes", MaxPathLen)
	case p[0] == '/':
		return fmt.Errorf("absolute path")
	case strings.IndexByte(p, 0) >= 0:
		return fmt.Errorf("path holds a NUL byte")
	}
	for seg := range strings.SplitSeq(p, "/") {
		switch seg {
		case "":
			return fmt.Errorf("empty path segment (a doubled or trailing slash)")
		case ".", "..":
			return fmt.Errorf("path segment %q", seg)
		}
	}
	return nil
}
