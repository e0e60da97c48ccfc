package hashchain

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// HashPrefix is the domain-separation prefix hashed before an entry's canonical JSON
// (FORMAT.md §4): it keeps these hashes apart from any other SHA-256 over JSON.
const HashPrefix = "agent-rewind/hashchain/v1\n"

// MaxLineBytes is the longest line a chain may hold, not counting its LF.
const MaxLineBytes = 1 << 20

// maxSeq is the largest seq a double holds exactly (2⁵³−1), since JSON numbers are doubles.
const maxSeq = 1<<53 - 1

// ZeroHash is the prev of entry 0: 64 zeros.
const ZeroHash = "0000000000000000000000000000000000000000000000000000000000000000"

// Entry is one entry of the chain (FORMAT.md §2).
type Entry struct {
	Seq  int64           `json:"seq"`  // 0-based position, gapless
	Time string          `json:"time"` // RFC 3339, UTC
	Kind string          `json:"kind"` // what happened; the chain does not restrict kinds
	Data json.RawMessage `json:"data"` // a JSON object, in canonical form
	Prev string          `json:"prev"` // hex hash of the entry before; ZeroHash for seq 0
	Hash string          `json:"hash"` // hex SHA-256 of HashPrefix || JCS(entry without hash)
}

// parsedLine is what verification needs from one chain line: its seq, prev and hash, and where
// the "hash" member sits, so that the hashed bytes are line[:cut0] || line[cut1:] (FORMAT.md §4:
// the line without its hash member).
type parsedLine struct {
	seq        int64
	prev, hash [32]byte
	cut0, cut1 int
}

// sum computes the entry hash of the canonical line held by pl.
func (pl *parsedLine) sum(line []byte, h *lineHasher) [32]byte {
	return h.sum(line[:pl.cut0], line[pl.cut1:])
}

// lineHasher hashes entries without allocating: SHA-256 over HashPrefix and two slices.
type lineHasher struct {
	buf []byte
}

func (h *lineHasher) sum(a, b []byte) [32]byte {
	h.buf = append(append(append(h.buf[:0], HashPrefix...), a...), b...)
	return sha256.Sum256(h.buf)
}

// checkLine parses and checks one line (without its LF) of a chain, reporting the first problem
// of FORMAT.md §5.1 steps 2–3 that it has. The fast scanner accepts every canonical line; only
// a line it rejects goes through the reference parser, to say why.
func checkLine(line []byte) (parsedLine, Problem, string) {
	if pl, ok := scanLine(line); ok {
		return pl, "", ""
	}
	return parseLineSlow(line)
}

// parseLineSlow is the reference implementation of checkLine: parse strictly, check each
// member against FORMAT.md §2, then compare the line with its canonical encoding.
func parseLineSlow(line []byte) (pl parsedLine, _ Problem, _ string) {
	if len(line) > MaxLineBytes {
		return pl, ProblemUnparsable, fmt.Sprintf("line is %d bytes, over the limit of %d", len(line), MaxLineBytes)
	}
	v, err := parseJSON(line, 0, false)
	if err != nil {
		return pl, ProblemUnparsable, err.Error()
	}
	if v.kind != 'o' {
		return pl, ProblemUnparsable, "not a JSON object"
	}
	names := [...]string{"data", "hash", "kind", "prev", "seq", "time"}
	if len(v.members) != len(names) {
		return pl, ProblemUnparsable, fmt.Sprintf("has %d members, want exactly %q", len(v.members), names)
	}
	for i, m := range v.members { // sorted, so they match one to one
		if m.key != names[i] {
			return pl, ProblemUnparsable, fmt.Sprintf("unexpected member %q, want exactly %q", m.key, names)
		}
	}
	data, hash, kind, prev, seq, tm := &v.members[0].val, &v.members[1].val, &v.members[2].val, &v.members[3].val, &v.members[4].val, &v.members[5].val
	if data.kind != 'o' {
		return pl, ProblemUnparsable, "data is not a JSON object"
	}
	if kind.kind != 's' || kind.str == "" {
		return pl, ProblemUnparsable, "kind is not a non-empty string"
	}
	if tm.kind != 's' || !validTime(tm.str) {
		return pl, ProblemUnparsable, "time is not an RFC 3339 UTC time (YYYY-MM-DDTHH:MM:SS[.fraction]Z)"
	}
	if seq.kind != 'n' || seq.num < 0 || seq.num > maxSeq || seq.num != math.Trunc(seq.num) {
		return pl, ProblemUnparsable, "seq is not a non-negative integer of at most 2^53-1"
	}
	pl.seq = int64(seq.num)
	if prev.kind != 's' || !decodeHex32(&pl.prev, prev.str) {
		return pl, ProblemUnparsable, "prev is not 64 lowercase hex digits"
	}
	if hash.kind != 's' || !decodeHex32(&pl.hash, hash.str) {
		return pl, ProblemUnparsable, "hash is not 64 lowercase hex digits"
	}
	canon := appendCanonical(nil, &v)
	if !bytes.Equal(canon, line) {
		return pl, ProblemNonCanonical, fmt.Sprintf("the line differs from its RFC 8785 canonical form at byte %d", firstDiff(canon, line))
	}
	// Canonical, so the hash member follows {"data":<data>, directly.
	pl.cut0 = len(`{"data":`) + len(appendCanonical(nil, data)) + 1
	pl.cut1 = pl.cut0 + len(`"hash":"`) + 64 + len(`",`)
	return pl, "", ""
}

func firstDiff(a, b []byte) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

// validTime matches ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?Z$.
func validTime[T string | []byte](s T) bool {
	const layout = "dddd-dd-ddTdd:dd:dd"
	if len(s) < len(layout)+1 || s[len(s)-1] != 'Z' {
		return false
	}
	for i := 0; i < len(layout); i++ {
		if layout[i] == 'd' {
			if s[i] < '0' || s[i] > '9' {
				return false
			}
		} else if s[i] != layout[i] {
			return false
		}
	}
	frac := s[len(layout) : len(s)-1]
	if len(frac) == 0 {
		return true
	}
	if frac[0] != '.' || len(frac) < 2 || len(frac) > 10 {
		return false
	}
	for i := 1; i < len(frac); i++ {
		if frac[i] < '0' || frac[i] > '9' {
			return false
		}
	}
	return true
}

// decodeHex32 decodes 64 lowercase hex digits into dst.
func decodeHex32[T string | []byte](dst *[32]byte, s T) bool {
	if len(s) != 64 {
		return false
	}
	bad := byte(0)
	for i := range 32 {
		hi, lo := unhexTable[s[2*i]], unhexTable[s[2*i+1]]
		bad |= hi | lo
		dst[i] = hi<<4 | lo&0x0f
	}
	return bad&0xf0 == 0
}

// unhexTable maps a lowercase hex digit to its value and anything else to 0xff.
var unhexTable = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i, c := range hexDigits {
		t[c] = byte(i)
	}
	return t
}()

func unhex(c byte) (byte, bool) {
	v := unhexTable[c]
	return v, v != 0xff
}

// canonicalData checks that data marshals to a JSON object that canonical JSON keeps as it is,
// and returns its canonical form.
func canonicalData(data any) ([]byte, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return nil, fmt.Errorf("%w: data (%T) does not marshal to JSON: %v", ErrBadData, data, err)
	}
	v, err := parseJSON(raw, 1, true) // data sits at depth 2, inside the entry
	if err != nil {
		return nil, fmt.Errorf("%w: data (%T): %v", ErrBadData, data, err)
	}
	if v.kind != 'o' {
		return nil, fmt.Errorf("%w: data must marshal to a JSON object, but %T marshals to %.40s: pass a struct or a map", ErrBadData, data, raw)
	}
	return appendCanonical(nil, &v), nil
}

// encodeEntry builds the canonical line (without LF) of the entry with these fields, and its
// hash. data must be canonical JSON of an object; prev and tm must be valid.
func encodeEntry(seq int64, tm, kind string, data []byte, prev [32]byte) (line []byte, hash [32]byte) {
	var hashed []byte
	hashed = append(hashed, `{"data":`...)
	hashed = append(hashed, data...)
	hashed = append(hashed, ',')
	cut := len(hashed)
	hashed = append(hashed, `"kind":`...)
	hashed = appendString(hashed, kind)
	hashed = append(hashed, `,"prev":"`...)
	hashed = hex.AppendEncode(hashed, prev[:])
	hashed = append(hashed, `","seq":`...)
	hashed = strconv.AppendInt(hashed, seq, 10)
	hashed = append(hashed, `,"time":"`...)
	hashed = append(hashed, tm...)
	hashed = append(hashed, `"}`...)
	var h lineHasher
	hash = h.sum(hashed, nil)
	line = make([]byte, 0, len(hashed)+len(`"hash":"",`)+64)
	line = append(line, hashed[:cut]...)
	line = append(line, `"hash":"`...)
	line = hex.AppendEncode(line, hash[:])
	line = append(line, `",`...)
	line = append(line, hashed[cut:]...)
	return line, hash
}

// checkKind refuses a kind that is empty or not valid UTF-8.
func checkKind(kind string) error {
	if kind == "" {
		return fmt.Errorf("%w: kind is empty: name what happened (checkpoint, rewind, effect, ...)", ErrBadData)
	}
	if !utf8.ValidString(kind) {
		return fmt.Errorf("%w: kind %q is not valid UTF-8", ErrBadData, kind)
	}
	return nil
}

// decodeEntry returns the Entry held by a line that checkLine accepted.
func decodeEntry(line []byte) (Entry, error) {
	var e Entry
	if err := json.Unmarshal(line, &e); err != nil {
		return Entry{}, err
	}
	return e, nil
}
