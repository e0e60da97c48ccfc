package hashchain

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// This file is the reference ("slow path") RFC 8785 JSON Canonicalization Scheme: a strict JSON
// parser into a small tree, and the canonical serializer. Appends use it to encode entries; the
// verifier's fast line scanner (line.go) is fuzzed against it.

// MaxDepth is how deep JSON values may nest in a chain line; the entry object is depth 1.
const MaxDepth = 64

// errJSON is wrapped by every parse error of this file.
var errJSON = errors.New("invalid JSON")

// jvalue is a parsed JSON value. Objects keep their members sorted by key in JCS order.
type jvalue struct {
	kind    byte // 'o' object, 'a' array, 's' string, 'n' number, 't' true, 'f' false, 'z' null
	str     string
	num     float64
	members []jmember
	elems   []jvalue
}

type jmember struct {
	key string
	val jvalue
}

// member returns the value of key in object v.
func (v *jvalue) member(key string) (*jvalue, bool) {
	for i := range v.members {
		if v.members[i].key == key {
			return &v.members[i].val, true
		}
	}
	return nil, false
}

// jparser parses one JSON text strictly: RFC 8259 grammar, valid UTF-8 with no lone surrogates,
// no duplicate keys, finite numbers, at most MaxDepth levels.
type jparser struct {
	src   []byte
	pos   int
	depth int
	// exactInts refuses integer literals that a double cannot hold exactly (canonical JSON would
	// silently change them): writers use it, verifiers do not need it.
	exactInts bool
}

// parseJSON parses src, which must hold exactly one JSON value, at the given starting depth.
func parseJSON(src []byte, depth int, exactInts bool) (jvalue, error) {
	p := &jparser{src: src, depth: depth, exactInts: exactInts}
	p.space()
	v, err := p.value()
	if err != nil {
		return jvalue{}, err
	}
	p.space()
	if p.pos != len(p.src) {
		return jvalue{}, p.errorf("unexpected %s after the value", p.what())
	}
	return v, nil
}

func (p *jparser) errorf(format string, args ...any) error {
	return fmt.Errorf("%w at byte %d: %s", errJSON, p.pos, fmt.Sprintf(format, args...))
}

func (p *jparser) what() string {
	if p.pos >= len(p.src) {
		return "end of input"
	}
	return strconv.QuoteRune(rune(p.src[p.pos]))
}

func (p *jparser) space() {
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *jparser) value() (jvalue, error) {
	if p.pos >= len(p.src) {
		return jvalue{}, p.errorf("unexpected end of input, want a value")
	}
	switch c := p.src[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		s, err := p.string()
		return jvalue{kind: 's', str: s}, err
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case c == 't':
		return jvalue{kind: 't'}, p.literal("true")
	case c == 'f':
		return jvalue{kind: 'f'}, p.literal("false")
	case c == 'n':
		return jvalue{kind: 'z'}, p.literal("null")
	}
	return jvalue{}, p.errorf("unexpected %s, want a value", p.what())
}

func (p *jparser) literal(lit string) error {
	if len(p.src)-p.pos < len(lit) || string(p.src[p.pos:p.pos+len(lit)]) != lit {
		return p.errorf("invalid literal, want %s", lit)
	}
	p.pos += len(lit)
	return nil
}

func (p *jparser) enter() error {
	p.depth++
	if p.depth > MaxDepth {
		return p.errorf("values nest deeper than %d levels", MaxDepth)
	}
	return nil
}

func (p *jparser) object() (jvalue, error) {
	if err := p.enter(); err != nil {
		return jvalue{}, err
	}
	p.pos++ // {
	v := jvalue{kind: 'o'}
	p.space()
	if p.pos < len(p.src) && p.src[p.pos] == '}' {
		p.pos++
		p.depth--
		return v, nil
	}
	for {
		p.space()
		if p.pos >= len(p.src) || p.src[p.pos] != '"' {
			return jvalue{}, p.errorf("unexpected %s, want a member name", p.what())
		}
		key, err := p.string()
		if err != nil {
			return jvalue{}, err
		}
		p.space()
		if p.pos >= len(p.src) || p.src[p.pos] != ':' {
			return jvalue{}, p.errorf("unexpected %s, want ':'", p.what())
		}
		p.pos++
		p.space()
		val, err := p.value()
		if err != nil {
			return jvalue{}, err
		}
		v.members = append(v.members, jmember{key, val})
		p.space()
		if p.pos >= len(p.src) {
			return jvalue{}, p.errorf("unexpected end of input in an object")
		}
		if p.src[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.src[p.pos] != '}' {
			return jvalue{}, p.errorf("unexpected %s, want ',' or '}'", p.what())
		}
		p.pos++
		break
	}
	slices.SortStableFunc(v.members, func(a, b jmember) int { return compareUTF16(a.key, b.key) })
	for i := 1; i < len(v.members); i++ {
		if v.members[i].key == v.members[i-1].key {
			return jvalue{}, fmt.Errorf("%w: duplicate member name %q", errJSON, v.members[i].key)
		}
	}
	p.depth--
	return v, nil
}

func (p *jparser) array() (jvalue, error) {
	if err := p.enter(); err != nil {
		return jvalue{}, err
	}
	p.pos++ // [
	v := jvalue{kind: 'a'}
	p.space()
	if p.pos < len(p.src) && p.src[p.pos] == ']' {
		p.pos++
		p.depth--
		return v, nil
	}
	for {
		p.space()
		e, err := p.value()
		if err != nil {
			return jvalue{}, err
		}
		v.elems = append(v.elems, e)
		p.space()
		if p.pos >= len(p.src) {
			return jvalue{}, p.errorf("unexpected end of input in an array")
		}
		if p.src[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.src[p.pos] != ']' {
			return jvalue{}, p.errorf("unexpected %s, want ',' or ']'", p.what())
		}
		p.pos++
		break
	}
	p.depth--
	return v, nil
}

// string parses a JSON string at p.pos (which holds '"') and returns its value.
func (p *jparser) string() (string, error) {
	p.pos++
	start := p.pos
	// Fast path: no escapes and ASCII only.
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if c == '"' {
			s := string(p.src[start:p.pos])
			p.pos++
			return s, nil
		}
		if c == '\\' || c < 0x20 || c >= 0x80 {
			break
		}
		p.pos++
	}
	buf := append([]byte(nil), p.src[start:p.pos]...)
	for {
		if p.pos >= len(p.src) {
			return "", p.errorf("unterminated string")
		}
		c := p.src[p.pos]
		switch {
		case c == '"':
			p.pos++
			return string(buf), nil
		case c < 0x20:
			return "", p.errorf("control character %#02x in a string (write it escaped)", c)
		case c < 0x80:
			if c != '\\' {
				buf = append(buf, c)
				p.pos++
				continue
			}
			r, err := p.escape()
			if err != nil {
				return "", err
			}
			buf = utf8.AppendRune(buf, r)
		default:
			r, size := utf8.DecodeRune(p.src[p.pos:])
			if r == utf8.RuneError && size <= 1 {
				return "", p.errorf("invalid UTF-8 in a string")
			}
			buf = append(buf, p.src[p.pos:p.pos+size]...)
			p.pos += size
		}
	}
}

// escape decodes the escape sequence at p.pos (which holds '\'), joining surrogate pairs.
func (p *jparser) escape() (rune, error) {
	if p.pos+1 >= len(p.src) {
		return 0, p.errorf("unterminated escape")
	}
	c := p.src[p.pos+1]
	p.pos += 2
	switch c {
	case '"', '\\', '/':
		return rune(c), nil
	case 'b':
		return '\b', nil
	case 'f':
		return '\f', nil
	case 'n':
		return '\n', nil
	case 'r':
		return '\r', nil
	case 't':
		return '\t', nil
	case 'u':
		r, err := p.hex4()
		if err != nil {
			return 0, err
		}
		if utf16.IsSurrogate(r) {
			if r >= 0xDC00 || p.pos+1 >= len(p.src) || p.src[p.pos] != '\\' || p.src[p.pos+1] != 'u' {
				return 0, p.errorf("lone surrogate \\u%04x in a string (not valid Unicode)", r)
			}
			p.pos += 2
			r2, err := p.hex4()
			if err != nil {
				return 0, err
			}
			joined := utf16.DecodeRune(r, r2)
			if joined == utf8.RuneError {
				return 0, p.errorf("lone surrogate \\u%04x in a string (not valid Unicode)", r)
			}
			return joined, nil
		}
		return r, nil
	}
	p.pos -= 2
	return 0, p.errorf("invalid escape \\%c", c)
}

func (p *jparser) hex4() (rune, error) {
	if len(p.src)-p.pos < 4 {
		return 0, p.errorf("short \\u escape")
	}
	var r rune
	for _, c := range p.src[p.pos : p.pos+4] {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, p.errorf("invalid \\u escape")
		}
		r = r<<4 | rune(d)
	}
	p.pos += 4
	return r, nil
}

// number parses a JSON number per RFC 8259's grammar into a double.
func (p *jparser) number() (jvalue, error) {
	start := p.pos
	integer := true
	if p.src[p.pos] == '-' {
		p.pos++
	}
	switch {
	case p.pos < len(p.src) && p.src[p.pos] == '0':
		p.pos++
	case p.pos < len(p.src) && p.src[p.pos] >= '1' && p.src[p.pos] <= '9':
		p.digits()
	default:
		return jvalue{}, p.errorf("invalid number")
	}
	if p.pos < len(p.src) && p.src[p.pos] == '.' {
		integer = false
		p.pos++
		if p.digits() == 0 {
			return jvalue{}, p.errorf("invalid number: no digits after '.'")
		}
	}
	if p.pos < len(p.src) && (p.src[p.pos] == 'e' || p.src[p.pos] == 'E') {
		integer = false
		p.pos++
		if p.pos < len(p.src) && (p.src[p.pos] == '+' || p.src[p.pos] == '-') {
			p.pos++
		}
		if p.digits() == 0 {
			return jvalue{}, p.errorf("invalid number: no digits in the exponent")
		}
	}
	lit := string(p.src[start:p.pos])
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil || math.IsInf(f, 0) {
		return jvalue{}, fmt.Errorf("%w at byte %d: number %s is out of the range of an IEEE 754 double", errJSON, start, lit)
	}
	if integer && p.exactInts && !exactInteger(lit, f) {
		return jvalue{}, fmt.Errorf("%w: number %s cannot be kept exactly: canonical JSON (RFC 8785) holds numbers as IEEE 754 doubles and would write %s; encode it as a string", ErrBadData, lit, formatNumber(nil, f))
	}
	return jvalue{kind: 'n', num: f}, nil
}

func (p *jparser) digits() int {
	n := 0
	for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
		p.pos++
		n++
	}
	return n
}

// exactInteger reports whether the integer literal lit equals the double f exactly.
func exactInteger(lit string, f float64) bool {
	if len(lit) <= 16 { // |v| < 10^15 (or 10^16 with a sign): always exact
		if n, err := strconv.ParseInt(lit, 10, 64); err == nil && (n < 1<<53 && n > -(1<<53)) {
			return true
		}
	}
	want, ok := new(big.Int).SetString(lit, 10)
	if !ok {
		return false
	}
	got, acc := new(big.Float).SetFloat64(f).Int(nil)
	return acc == big.Exact && got.Cmp(want) == 0
}

// appendCanonical appends JCS(v) to dst.
func appendCanonical(dst []byte, v *jvalue) []byte {
	switch v.kind {
	case 'o':
		dst = append(dst, '{')
		for i := range v.members {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, v.members[i].key)
			dst = append(dst, ':')
			dst = appendCanonical(dst, &v.members[i].val)
		}
		return append(dst, '}')
	case 'a':
		dst = append(dst, '[')
		for i := range v.elems {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendCanonical(dst, &v.elems[i])
		}
		return append(dst, ']')
	case 's':
		return appendString(dst, v.str)
	case 'n':
		return formatNumber(dst, v.num)
	case 't':
		return append(dst, "true"...)
	case 'f':
		return append(dst, "false"...)
	default:
		return append(dst, "null"...)
	}
}

const hexDigits = "0123456789abcdef"

// appendString appends the JCS form of s (valid UTF-8) to dst.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c >= 0x20:
			dst = append(dst, c)
		case c == '\b':
			dst = append(dst, '\\', 'b')
		case c == '\t':
			dst = append(dst, '\\', 't')
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\f':
			dst = append(dst, '\\', 'f')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
	}
	return append(dst, '"')
}

// compareUTF16 orders valid UTF-8 strings by their UTF-16 code units, as RFC 8785 §3.2.3
// sorts member names. UTF-8 byte order is code point order, which differs from UTF-16 order
// only between a supplementary character (a surrogate pair, 0xD800..) and U+E000..U+FFFF.
func compareUTF16(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	if i == len(a) || i == len(b) {
		return len(a) - len(b)
	}
	// Back up to the start of the rune that differs (same prefix, so same boundary in both).
	for i > 0 && !utf8.RuneStart(a[i]) {
		i--
	}
	ra, _ := utf8.DecodeRuneInString(a[i:])
	rb, _ := utf8.DecodeRuneInString(b[i:])
	return int(utf16Lead(ra)) - int(utf16Lead(rb))
}

// utf16Lead returns r's first UTF-16 code unit, scaled so that two supplementary runes still
// compare by code point.
func utf16Lead(r rune) int64 {
	if r < 0x10000 {
		return int64(r) << 21
	}
	hi, _ := utf16.EncodeRune(r)
	return int64(hi)<<21 | int64(r)
}

// CanonicalJSON returns the RFC 8785 (JCS) canonical form of the JSON text src. It rejects
// invalid JSON, invalid Unicode, duplicate member names, numbers outside the double range and
// values nested deeper than MaxDepth.
func CanonicalJSON(src []byte) ([]byte, error) {
	v, err := parseJSON(src, 0, false)
	if err != nil {
		return nil, err
	}
	return appendCanonical(nil, &v), nil
}
