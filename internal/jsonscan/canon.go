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
	// SkipBreakpoints leaves out every "prompt_cache_breakpoint" member, at any depth:
	// OpenAI's cache markers, which move between requests without changing the prompt.
	SkipBreakpoints
	// elemsSkipCacheControl applies SkipCacheControl to every element of this array.
	elemsSkipCacheControl
	// flagElem marks an element of such an array, so a skipped marker records its index.
	flagElem
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
	// Skipped lists the non-null cache_control members the last Append left out: -1 for
	// one on the value itself, or the index of the "content" element it was on.
	Skipped []int
	// Breakpoints counts the non-null prompt_cache_breakpoint members it left out.
	Breakpoints int

	members []member
	tmp     []byte
	elem    int
}

type member struct{ start, keyEnd, end int } // offsets in dst, commas excluded

// Append appends the canonical form of the value at data[i] (no leading whitespace) to dst
// and returns it with the offset just past the value. depth is the number of containers
// already open around the value.
func (c *Canonicalizer) Append(dst, data []byte, i, depth int, flags Flags) ([]byte, int, error) {
	c.members = c.members[:0]
	c.Skipped = c.Skipped[:0]
	c.Breakpoints = 0
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
		breakpoint := flags&SkipBreakpoints != 0 && StringIs(key, esc, "prompt_cache_breakpoint")
		skip := (flags&SkipCacheControl != 0 && StringIs(key, esc, "cache_control")) ||
			(flags&SkipContent != 0 && StringIs(key, esc, "content")) || breakpoint
		if skip {
			if breakpoint && data[i] != 'n' {
				c.Breakpoints++
			} else if data[i] != 'n' && StringIs(key, esc, "cache_control") {
				if flags&flagElem != 0 {
					c.Skipped = append(c.Skipped, c.elem)
				} else {
					c.Skipped = append(c.Skipped, -1)
				}
			}
			if i, err = SkipValue(data, i, depth); err != nil {
				return dst, i, err
			}
		} else {
			child := flags & SkipBreakpoints
			if flags&ContentBlocks != 0 && StringIs(key, esc, "content") {
				child |= elemsSkipCacheControl
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
	child := flags & SkipBreakpoints
	if flags&elemsSkipCacheControl != 0 {
		child |= SkipCacheControl | flagElem
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
		c.elem = n
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
// holds no control characters, quotes or backslashes. With them, escapes already in canonical
// form are copied and the others decoded and written canonically, in one pass.
func AppendCanonicalString(dst, tok []byte, escaped bool) []byte {
	if !escaped {
		return append(dst, tok...)
	}
	s := tok[1 : len(tok)-1]
	dst = append(dst, '"')
	run := 0 // start of the bytes not yet copied
	for i := 0; i < len(s); {
		if s[i] != '\\' {
			k := bytes.IndexByte(s[i:], '\\')
			if k < 0 {
				break
			}
			i += k
		}
		switch e := s[i+1]; e {
		case '"', '\\', 'b', 'f', 'n', 'r', 't':
			i += 2 // canonical already
			continue
		case 'u':
			if s[i+2] == '0' && s[i+3] == '0' && s[i+4] <= '1' && isLowerHex(s[i+5]) {
				i += 6 // \u00xx for a control character: canonical unless it has a short form
				if v := s[i-2]<<4 | hexVal(s[i-1]); v != '\b' && v != '\f' && v != '\n' && v != '\r' && v != '\t' {
					continue
				}
				i -= 6
			}
		}
		// Decode this escape (a surrogate pair takes two) and write it canonically.
		dst = append(dst, s[run:i]...)
		n := 2
		if s[i+1] == 'u' {
			n = 6
			if r := hex4(s[i+2:]); r >= 0xd800 && r < 0xdc00 && i+12 <= len(s) && s[i+6] == '\\' && s[i+7] == 'u' {
				if r2 := hex4(s[i+8:]); r2 >= 0xdc00 && r2 < 0xe000 {
					n = 12 // a surrogate pair: one rune
				}
			}
		}
		var q [16]byte
		tokq := append(append(append(q[:0], '"'), s[i:i+n]...), '"')
		var out [8]byte
		dst = appendEscaped(dst, AppendUnquoted(out[:0], tokq))
		i += n
		run = i
	}
	dst = append(dst, s[run:]...)
	return append(dst, '"')
}

// appendEscaped writes decoded bytes with the canonical escaping.
func appendEscaped(dst, dec []byte) []byte {
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
	return append(dst, dec[start:]...)
}

func isLowerHex(c byte) bool { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') }

func hexVal(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}
