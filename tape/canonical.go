package tape

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// maxJSONDepth bounds the nesting CanonicalJSON follows; deeper documents hash as raw bytes, so
// a hostile body costs bounded stack.
const maxJSONDepth = 1000

// CanonicalJSON returns the canonical form of a JSON document, or ok=false when body is not one
// that has a canonical form here: invalid UTF-8, not exactly one JSON value (surrounding
// whitespace aside), an object with a duplicate key (which readers resolve differently), or
// nesting deeper than 1000. Two documents that differ only in object property order,
// insignificant whitespace, or string escape spelling ("\u0041" for "A") have the same canonical
// form.
//
// The canonical form has no whitespace; object members are sorted by the bytes of their decoded
// UTF-8 keys; array order is kept; numbers, true, false and null are written as they appear in
// the source (so 1 and 1.0 differ); strings are written with only '"', '\\' and U+0000..U+001F
// escaped, those as \u00xx with lowercase hex, and every other character as its UTF-8 bytes.
// A lone surrogate escape ("\ud800") decodes to U+FFFD, as in encoding/json.
func CanonicalJSON(body []byte) (canonical []byte, ok bool) {
	if !utf8.Valid(body) {
		return nil, false
	}
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	out, err := canonValue(d, make([]byte, 0, len(body)), 0)
	if err != nil {
		return nil, false
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, false
	}
	return out, true
}

var errNotCanonical = errors.New("not canonical JSON")

func canonValue(d *json.Decoder, dst []byte, depth int) ([]byte, error) {
	if depth >= maxJSONDepth {
		return nil, errNotCanonical
	}
	tok, err := d.Token()
	if err != nil {
		return nil, errNotCanonical
	}
	switch v := tok.(type) {
	case json.Delim:
		switch v {
		case '{':
			return canonObject(d, dst, depth)
		case '[':
			dst = append(dst, '[')
			for i := 0; d.More(); i++ {
				if i > 0 {
					dst = append(dst, ',')
				}
				if dst, err = canonValue(d, dst, depth+1); err != nil {
					return nil, err
				}
			}
			if _, err := d.Token(); err != nil { // ']'
				return nil, errNotCanonical
			}
			return append(dst, ']'), nil
		}
		return nil, errNotCanonical
	case string:
		return appendJSONString(dst, v), nil
	case json.Number:
		return append(dst, v...), nil
	case bool:
		if v {
			return append(dst, "true"...), nil
		}
		return append(dst, "false"...), nil
	case nil:
		return append(dst, "null"...), nil
	}
	return nil, errNotCanonical
}

func canonObject(d *json.Decoder, dst []byte, depth int) ([]byte, error) {
	type member struct {
		key   string
		value []byte
	}
	var members []member
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return nil, errNotCanonical
		}
		key, ok := tok.(string)
		if !ok {
			return nil, errNotCanonical
		}
		value, err := canonValue(d, nil, depth+1)
		if err != nil {
			return nil, err
		}
		members = append(members, member{key, value})
	}
	if _, err := d.Token(); err != nil { // '}'
		return nil, errNotCanonical
	}
	slices.SortFunc(members, func(a, b member) int { return strings.Compare(a.key, b.key) })
	dst = append(dst, '{')
	for i, m := range members {
		if i > 0 {
			if members[i-1].key == m.key {
				return nil, errNotCanonical
			}
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, m.key)
		dst = append(dst, ':')
		dst = append(dst, m.value...)
	}
	return append(dst, '}'), nil
}

func appendJSONString(dst []byte, s string) []byte {
	const hexdigits = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexdigits[c>>4], hexdigits[c&0xf])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
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
// body is 'r' with length 0).
func RequestHash(r Request, answerHeaders []string) Hash {
	return hashCanonical(r.Method, r.Path, pickHeaders(r.Header, canonicalNames(answerHeaders), true), r.Body)
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
