package jsonscan

import (
	"bytes"
	"slices"
)

// Flags select members the canonical form leaves out, for comparisons in which those members
// do not count (a cache_control marker moves every turn without changing the prompt).
type Flags uint8

const (
	// SkipCacheControl leaves out the "cache_control" member of this object (not of nested
	// objects).
	SkipCacheControl Flags = 1 << iota
	// SkipContent leaves out the "content" member of this object.
	SkipContent
	// ContentBlocks applies SkipCacheControl to every object element of this object's
	// "content" array: the nested blocks of a tool_result.
	ContentBlocks
	// elemsSkipCacheControl applies SkipCacheControl to every element of this array.
	elemsSkipCacheControl
)

// Canonicalizer writes the canonical form of JSON values: no insignificant whitespace, object
// members sorted by their canonical key bytes (a stable sort, so duplicate keys keep their
// order), strings re-escaped minimally (only '"', '\\' and control characters; short forms
// \b \f \n \r \t, otherwise \u00xx), numbers and literals exactly as written. Two values have
// the same canonical form exactly when they are equal up to member order, whitespace and
// string escaping. Numbers are compared by their text: 1.0 and 1 differ.
//
// A Canonicalizer keeps scratch space between calls and is not safe for concurrent use.
type Canonicalizer struct {
	members []member
	tmp     []byte
}

type member struct{ start, keyEnd, end int } // offsets in dst, commas excluded

// Append appends the canonical form of the value at data[i] (no leading whitespace) to dst
// and returns it with the offset just past the value. depth is the number of containers
// already open around the value.
func (c *Canonicalizer) Append(dst, data []byte, i, depth int, flags Flags) ([]byte, int, error) {
	c.members = c.members[:0]
	return c.value(dst, data, i, depth, flags)
}

func (c *Canonicalizer) value(dst, data []byte, i, depth int, flags Flags) ([]byte, int, error) {
	if i >= len(data) {
		return dst, i, errAt(i, "unexpected end of input, expected a value")
	}
	switch ch := data[i]; ch {
	case '{':
		return c.object(dst, data, i, depth+1, flags)
	case '[':
		return c.array(dst, data, i, depth+1, flags)
	case '"':
		end, esc, err := ScanString(data, i)
		if err != nil {
			return dst, end, err
		}
		return AppendCanonicalString(dst, data[i:end], esc), end, nil
	default:
		end, err := SkipValue(data, i, depth)
		if err != nil {
			return dst, end, err
		}
		return append(dst, data[i:end]...), end, nil
	}
}

func (c *Canonicalizer) object(dst, data []byte, i, depth int, flags Flags) ([]byte, int, error) {
	if depth > MaxDepth {
		return dst, i, errAt(i, "nested too deeply")
	}
	base := len(c.members)
	dst = append(dst, '{')
	objStart := len(dst)
	sorted := true
	i = SkipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return append(dst, '}'), i + 1, nil
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return dst, i, errAt(i, "expected a string object key")
		}
		ke, esc, err := ScanString(data, i)
		if err != nil {
			return dst, ke, err
		}
		key := data[i:ke]
		i = SkipSpace(data, ke)
		if i >= len(data) || data[i] != ':' {
			return dst, i, errAt(i, "expected ':' after object key")
		}
		i = SkipSpace(data, i+1)
		skip := (flags&SkipCacheControl != 0 && StringIs(key, esc, "cache_control")) ||
			(flags&SkipContent != 0 && StringIs(key, esc, "content"))
		if skip {
			if i, err = SkipValue(data, i, depth); err != nil {
				return dst, i, err
			}
		} else {
			var child Flags
			if flags&ContentBlocks != 0 && StringIs(key, esc, "content") {
				child = elemsSkipCacheControl
			}
			if len(c.members) > base {
				dst = append(dst, ',')
			}
			mstart := len(dst)
			dst = AppendCanonicalString(dst, key, esc)
			keyEnd := len(dst)
			dst = append(dst, ':')
			if dst, i, err = c.value(dst, data, i, depth, child); err != nil {
				return dst, i, err
			}
			if len(c.members) > base {
				p := c.members[len(c.members)-1]
				if bytes.Compare(dst[p.start:p.keyEnd], dst[mstart:keyEnd]) > 0 {
					sorted = false
				}
			}
			c.members = append(c.members, member{mstart, keyEnd, len(dst)})
		}
		i = SkipSpace(data, i)
		if i < len(data) && data[i] == ',' {
			i = SkipSpace(data, i+1)
			continue
		}
		if i < len(data) && data[i] == '}' {
			i++
			break
		}
		return dst, i, errAt(i, "expected ',' or '}' in object")
	}
	if !sorted {
		ms := c.members[base:]
		c.tmp = append(c.tmp[:0], dst[objStart:]...)
		tmp := c.tmp
		slices.SortStableFunc(ms, func(a, b member) int {
			return bytes.Compare(tmp[a.start-objStart:a.keyEnd-objStart], tmp[b.start-objStart:b.keyEnd-objStart])
		})
		dst = dst[:objStart]
		for k, m := range ms {
			if k > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, tmp[m.start-objStart:m.end-objStart]...)
		}
	}
	c.members = c.members[:base]
	return append(dst, '}'), i, nil
}

func (c *Canonicalizer) array(dst, data []byte, i, depth int, flags Flags) ([]byte, int, error) {
	if depth > MaxDepth {
		return dst, i, errAt(i, "nested too deeply")
	}
	var child Flags
	if flags&elemsSkipCacheControl != 0 {
		child = SkipCacheControl
	}
	dst = append(dst, '[')
	i = SkipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return append(dst, ']'), i + 1, nil
	}
	for n := 0; ; n++ {
		if n > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, i, err = c.value(dst, data, i, depth, child); err != nil {
			return dst, i, err
		}
		i = SkipSpace(data, i)
		if i < len(data) && data[i] == ',' {
			i = SkipSpace(data, i+1)
			continue
		}
		if i < len(data) && data[i] == ']' {
			return append(dst, ']'), i + 1, nil
		}
		return dst, i, errAt(i, "expected ',' or ']' in array")
	}
}

// AppendCanonicalString appends the canonical form of the raw string token tok (quotes
// included, validated by ScanString). Without escapes the token is already canonical: it
// holds no control characters, quotes or backslashes.
func AppendCanonicalString(dst, tok []byte, escaped bool) []byte {
	if !escaped {
		return append(dst, tok...)
	}
	var buf [256]byte
	dec := AppendUnquoted(buf[:0], tok)
	dst = append(dst, '"')
	start := 0
	for k := 0; k < len(dec); k++ {
		b := dec[k]
		if b >= 0x20 && b != '"' && b != '\\' {
			continue
		}
		dst = append(dst, dec[start:k]...)
		switch b {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			const hexDigits = "0123456789abcdef"
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xf])
		}
		start = k + 1
	}
	dst = append(dst, dec[start:]...)
	return append(dst, '"')
}
