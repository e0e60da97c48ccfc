package tape

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// maxJSONDepth bounds the nesting of arrays and objects CanonicalJSON follows; deeper documents
// hash as raw bytes, so a hostile body costs bounded stack.
const maxJSONDepth = 1000

// CanonicalJSON returns the canonical form of a JSON document (RFC 8259), or ok=false when body
// has none here: invalid UTF-8, not exactly one JSON value (surrounding whitespace aside), an
// object with a duplicate key (which readers resolve differently), a lone UTF-16 surrogate
// escape ("\ud800", which has no character to stand for), or arrays and objects nested more
// than 1000 deep. Two documents that differ only in object property order, insignificant
// whitespace, or string escape spelling ("\u0041" for "A") have the same canonical form.
//
// The canonical form has no whitespace; object members are sorted by the bytes of their decoded
// UTF-8 keys; array order is kept; numbers, true, false and null are written as they appear in
// the source (so 1 and 1.0 differ); strings are written with only '"', '\\' and U+0000..U+001F
// escaped, those as \u00xx with lowercase hex, and every other character as its UTF-8 bytes.
func CanonicalJSON(body []byte) (canonical []byte, ok bool) {
	if !utf8.Valid(body) {
		return nil, false
	}
	p := canonParser{in: body}
	p.space()
	out, ok := p.value(make([]byte, 0, len(body)), 0)
	if !ok {
		return nil, false
	}
	p.space()
	if p.i != len(p.in) {
		return nil, false
	}
	return out, true
}

// canonParser is a one-pass recursive-descent JSON parser that writes the canonical form as it
// reads. Long strings without escapes, the bulk of an LLM request, are copied in one piece.
type canonParser struct {
	in []byte
	i  int
}

func (p *canonParser) space() {
	for p.i < len(p.in) {
		switch p.in[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *canonParser) value(dst []byte, depth int) ([]byte, bool) {
	if p.i >= len(p.in) {
		return nil, false
	}
	switch c := p.in[p.i]; {
	case c == '{':
		if depth >= maxJSONDepth {
			return nil, false
		}
		return p.object(dst, depth+1)
	case c == '[':
		if depth >= maxJSONDepth {
			return nil, false
		}
		return p.array(dst, depth+1)
	case c == '"':
		return p.str(dst)
	case c == 't':
		return p.literal(dst, "true")
	case c == 'f':
		return p.literal(dst, "false")
	case c == 'n':
		return p.literal(dst, "null")
	case c == '-' || '0' <= c && c <= '9':
		return p.number(dst)
	}
	return nil, false
}

func (p *canonParser) literal(dst []byte, lit string) ([]byte, bool) {
	if !bytes.HasPrefix(p.in[p.i:], []byte(lit)) {
		return nil, false
	}
	p.i += len(lit)
	return append(dst, lit...), true
}

// number checks the RFC 8259 number grammar and copies the number as written:
// -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
func (p *canonParser) number(dst []byte) ([]byte, bool) {
	start := p.i
	digits := func() int {
		n := 0
		for p.i < len(p.in) && '0' <= p.in[p.i] && p.in[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.in[p.i] == '-' {
		p.i++
	}
	if p.i < len(p.in) && p.in[p.i] == '0' {
		p.i++
	} else if digits() == 0 {
		return nil, false
	}
	if p.i < len(p.in) && p.in[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return nil, false
		}
	}
	if p.i < len(p.in) && (p.in[p.i] == 'e' || p.in[p.i] == 'E') {
		p.i++
		if p.i < len(p.in) && (p.in[p.i] == '+' || p.in[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return nil, false
		}
	}
	return append(dst, p.in[start:p.i]...), true
}

func (p *canonParser) array(dst []byte, depth int) ([]byte, bool) {
	p.i++ // '['
	dst = append(dst, '[')
	p.space()
	if p.i < len(p.in) && p.in[p.i] == ']' {
		p.i++
		return append(dst, ']'), true
	}
	for {
		var ok bool
		if dst, ok = p.value(dst, depth); !ok {
			return nil, false
		}
		p.space()
		if p.i >= len(p.in) {
			return nil, false
		}
		switch p.in[p.i] {
		case ',':
			p.i++
			dst = append(dst, ',')
			p.space()
		case ']':
			p.i++
			return append(dst, ']'), true
		default:
			return nil, false
		}
	}
}

func (p *canonParser) object(dst []byte, depth int) ([]byte, bool) {
	p.i++ // '{'
	p.space()
	if p.i < len(p.in) && p.in[p.i] == '}' {
		p.i++
		return append(dst, '{', '}'), true
	}
	// Members are written to buf as they are read (canonical key, ':', canonical value), then
	// copied to dst in key order. The sort key is the canonical key, whose order is the order of
	// the decoded keys: the canonical encoding keeps every byte >= 0x20 other than '"' and '\\'
	// as is, and the escapes it writes never tie two different keys.
	type member struct{ key, all []byte }
	var members []member
	buf := make([]byte, 0, 64)
	type span struct{ start, keyEnd, end int }
	var spans []span
	for {
		if p.i >= len(p.in) || p.in[p.i] != '"' {
			return nil, false
		}
		start := len(buf)
		var ok bool
		if buf, ok = p.str(buf); !ok {
			return nil, false
		}
		keyEnd := len(buf)
		p.space()
		if p.i >= len(p.in) || p.in[p.i] != ':' {
			return nil, false
		}
		p.i++
		p.space()
		buf = append(buf, ':')
		if buf, ok = p.value(buf, depth); !ok {
			return nil, false
		}
		spans = append(spans, span{start, keyEnd, len(buf)})
		p.space()
		if p.i >= len(p.in) {
			return nil, false
		}
		if p.in[p.i] == '}' {
			p.i++
			break
		}
		if p.in[p.i] != ',' {
			return nil, false
		}
		p.i++
		p.space()
	}
	members = make([]member, len(spans))
	for i, s := range spans {
		members[i] = member{buf[s.start:s.keyEnd], buf[s.start:s.end]}
	}
	slices.SortFunc(members, func(a, b member) int { return compareKeys(a.key, b.key) })
	dst = append(dst, '{')
	for i, m := range members {
		if i > 0 {
			if bytes.Equal(members[i-1].key, m.key) {
				return nil, false
			}
			dst = append(dst, ',')
		}
		dst = append(dst, m.all...)
	}
	return append(dst, '}'), true
}

// compareKeys orders canonical string encodings (quotes included) by their decoded bytes. Bytes
// below 0x20, '"' and '\\' are escaped (as \u00xx, \" and \\), which would sort them by their
// escape's spelling, so the comparison decodes just those.
func compareKeys(a, b []byte) int {
	a, b = a[1:len(a)-1], b[1:len(b)-1]
	for len(a) > 0 && len(b) > 0 {
		ca, na := firstByte(a)
		cb, nb := firstByte(b)
		if ca != cb {
			return int(ca) - int(cb)
		}
		a, b = a[na:], b[nb:]
	}
	return len(a) - len(b)
}

// firstByte decodes the first byte of a canonical string's content and how many bytes of the
// encoding it took.
func firstByte(s []byte) (byte, int) {
	if s[0] != '\\' {
		return s[0], 1
	}
	if s[1] == 'u' { // \u00xx
		return unhex(s[4])<<4 | unhex(s[5]), 6
	}
	return s[1], 2 // \" or \\
}

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}

// str reads a JSON string and appends its canonical encoding.
func (p *canonParser) str(dst []byte) ([]byte, bool) {
	const hexdigits = "0123456789abcdef"
	p.i++ // opening quote
	dst = append(dst, '"')
	for {
		// Copy the run of bytes that need nothing done.
		start := p.i
		for p.i < len(p.in) {
			c := p.in[p.i]
			if c == '"' || c == '\\' || c < 0x20 {
				break
			}
			p.i++
		}
		dst = append(dst, p.in[start:p.i]...)
		if p.i >= len(p.in) || p.in[p.i] < 0x20 { // unterminated, or a raw control character
			return nil, false
		}
		if p.in[p.i] == '"' {
			p.i++
			return append(dst, '"'), true
		}
		// An escape.
		if p.i+1 >= len(p.in) {
			return nil, false
		}
		var r rune
		switch e := p.in[p.i+1]; e {
		case '"', '\\', '/':
			r = rune(e)
			p.i += 2
		case 'b':
			r, p.i = '\b', p.i+2
		case 'f':
			r, p.i = '\f', p.i+2
		case 'n':
			r, p.i = '\n', p.i+2
		case 'r':
			r, p.i = '\r', p.i+2
		case 't':
			r, p.i = '\t', p.i+2
		case 'u':
			var ok bool
			if r, ok = p.hex4(); !ok {
				return nil, false
			}
			if utf16.IsSurrogate(r) {
				// Only a high surrogate followed by an escaped low surrogate is a character.
				lo, ok := p.hex4()
				if !ok || r >= 0xdc00 || lo < 0xdc00 || lo > 0xdfff {
					return nil, false
				}
				r = utf16.DecodeRune(r, lo)
			}
		default:
			return nil, false
		}
		switch {
		case r == '"' || r == '\\':
			dst = append(dst, '\\', byte(r))
		case r < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hexdigits[r>>4], hexdigits[r&0xf])
		default:
			dst = utf8.AppendRune(dst, r)
		}
	}
}

// hex4 reads "\uXXXX" at p.i.
func (p *canonParser) hex4() (rune, bool) {
	if p.i+6 > len(p.in) || p.in[p.i] != '\\' || p.in[p.i+1] != 'u' {
		return 0, false
	}
	var r rune
	for _, c := range p.in[p.i+2 : p.i+6] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	p.i += 6
	return r, true
}

// Body kinds in the canonical request.
const (
	bodyJSON byte = 'j' // the body had a canonical JSON form, which is hashed
	bodyRaw  byte = 'r' // the body is hashed byte for byte
)

// requestHashPrefix starts the canonical request and names its version.
const requestHashPrefix = "agent-rewind/tape request v1\x00"

// RequestHash is the SHA-256 of the canonical form of a request:
//
//	"agent-rewind/tape request v1" 0x00
//	str(method) | str(path)
//	u32(n) | n × ( str(lowercase header name) | str(value) )
//	u8(body kind) | str(body)
//
// str(s) is a big-endian u32 length and the bytes of s. The headers are the request's answer
// headers (answerHeaders, matched case-insensitively; others are ignored), values trimmed of
// surrounding space, sorted by name, each name's values in order. The body kind is 'j' and the
// body its CanonicalJSON form when it has one, else 'r' and the body byte for byte (so an empty
// body is 'r' with length 0). The body is r.MatchBody when it is not nil, else r.Body.
func RequestHash(r Request, answerHeaders []string) Hash {
	return hashCanonical(r.Method, r.Path, pickHeaders(r.Header, canonicalNames(answerHeaders), true), r.hashedBody())
}

func hashCanonical(method, path string, headers []headerField, body []byte) Hash {
	h := sha256.New()
	var b []byte
	b = append(b, requestHashPrefix...)
	b = appendStr(b, method)
	b = appendStr(b, path)
	b = binary.BigEndian.AppendUint32(b, uint32(len(headers)))
	for _, f := range headers {
		b = appendStr(b, strings.ToLower(f.name))
		b = appendStr(b, f.value)
	}
	kind, content := bodyRaw, body
	if c, ok := CanonicalJSON(body); ok {
		kind, content = bodyJSON, c
	}
	b = append(b, kind)
	b = binary.BigEndian.AppendUint32(b, uint32(len(content)))
	h.Write(b)
	h.Write(content)
	var sum Hash
	h.Sum(sum[:0])
	return sum
}
