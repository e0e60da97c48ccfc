package hashchain

import (
	"bytes"
	"strconv"
	"unicode/utf8"
)

// This file is the verifier's fast path: a scanner that accepts exactly the canonical chain
// lines (FORMAT.md §5) without building a tree or allocating. It never decides why a line is
// bad: anything it does not accept goes to parseLineSlow, the reference, which FuzzLine checks
// it against.

// scanLine accepts a canonical line of the form
//
//	{"data":{…},"hash":"<64 hex>","kind":"…","prev":"<64 hex>","seq":N,"time":"…"}
//
// and returns its fields; ok is false for anything else.
func scanLine(b []byte) (pl parsedLine, ok bool) {
	if len(b) > MaxLineBytes {
		return pl, false
	}
	i, ok := expect(b, 0, `{"data":`)
	if !ok || i >= len(b) || b[i] != '{' {
		return pl, false
	}
	if i, ok = scanValue(b, i, 2); !ok {
		return pl, false
	}
	pl.cut0 = i + 1
	if i, ok = expect(b, i, `,"hash":"`); !ok || len(b)-i < 64 || !decodeHex32(&pl.hash, b[i:i+64]) {
		return pl, false
	}
	if i, ok = expect(b, i+64, `",`); !ok {
		return pl, false
	}
	pl.cut1 = i
	if i, ok = expect(b, i, `"kind":`); !ok || len(b)-i < 2 || b[i] != '"' || b[i+1] == '"' {
		return pl, false
	}
	if i, _, ok = scanString(b, i); !ok {
		return pl, false
	}
	if i, ok = expect(b, i, `,"prev":"`); !ok || len(b)-i < 64 || !decodeHex32(&pl.prev, b[i:i+64]) {
		return pl, false
	}
	if i, ok = expect(b, i+64, `","seq":`); !ok {
		return pl, false
	}
	// seq: "0", or 1 to 16 digits without a leading zero, at most 2^53-1.
	j := i
	for j < len(b) && b[j] >= '0' && b[j] <= '9' {
		j++
	}
	if j == i || j-i > 16 || (b[i] == '0' && j-i > 1) {
		return pl, false
	}
	seq, err := strconv.ParseInt(string(b[i:j]), 10, 64)
	if err != nil || seq > maxSeq {
		return pl, false
	}
	pl.seq = seq
	if i, ok = expect(b, j, `,"time":"`); !ok {
		return pl, false
	}
	end := bytes.IndexByte(b[i:], '"')
	if end < 0 || !validTime(b[i:i+end]) {
		return pl, false
	}
	if i, ok = expect(b, i+end, `"}`); !ok || i != len(b) {
		return pl, false
	}
	return pl, true
}

// expect matches lit at b[i:] and returns the index after it.
func expect(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}

// scanValue accepts a canonical JSON value at b[i:], which is at the given nesting depth if it
// is an object or array, and returns the index after it.
func scanValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '{':
		if depth > MaxDepth {
			return i, false
		}
		i++
		if i < len(b) && b[i] == '}' {
			return i + 1, true
		}
		prevStart, prevEnd, prevEsc := -1, -1, false
		for {
			if i >= len(b) || b[i] != '"' {
				return i, false
			}
			end, esc, ok := scanString(b, i)
			if !ok {
				return i, false
			}
			if prevStart >= 0 && !keyAfter(b[prevStart:prevEnd], prevEsc, b[i:end], esc) {
				return i, false
			}
			prevStart, prevEnd, prevEsc = i, end, esc
			if end >= len(b) || b[end] != ':' {
				return i, false
			}
			if i, ok = scanValue(b, end+1, depth+1); !ok || i >= len(b) {
				return i, false
			}
			if b[i] == '}' {
				return i + 1, true
			}
			if b[i] != ',' {
				return i, false
			}
			i++
		}
	case c == '[':
		if depth > MaxDepth {
			return i, false
		}
		i++
		if i < len(b) && b[i] == ']' {
			return i + 1, true
		}
		for {
			var ok bool
			if i, ok = scanValue(b, i, depth+1); !ok || i >= len(b) {
				return i, false
			}
			if b[i] == ']' {
				return i + 1, true
			}
			if b[i] != ',' {
				return i, false
			}
			i++
		}
	case c == '"':
		end, _, ok := scanString(b, i)
		return end, ok
	case c == '-' || c >= '0' && c <= '9':
		return scanNumber(b, i)
	case c == 't':
		return expect(b, i, "true")
	case c == 'f':
		return expect(b, i, "false")
	case c == 'n':
		return expect(b, i, "null")
	}
	return i, false
}

// keyAfter reports whether member name b (quoted, as scanned) sorts strictly after a in JCS
// order. Names without escapes compare as they are; escaped ones are decoded first.
func keyAfter(a []byte, aEsc bool, b []byte, bEsc bool) bool {
	if !aEsc && !bEsc {
		return compareUTF16(string(a[1:len(a)-1]), string(b[1:len(b)-1])) < 0
	}
	ka, err1 := parseJSON(a, 0, false)
	kb, err2 := parseJSON(b, 0, false)
	return err1 == nil && err2 == nil && compareUTF16(ka.str, kb.str) < 0
}

// scanString accepts a canonically escaped JSON string at b[i:] (which holds '"') and returns
// the index after it, and whether it holds any escape.
func scanString(b []byte, i int) (end int, esc, ok bool) {
	j := i + 1
	for j < len(b) {
		c := b[j]
		switch {
		case c == '"':
			return j + 1, esc, true
		case c == '\\':
			esc = true
			if j+1 >= len(b) {
				return j, esc, false
			}
			switch b[j+1] {
			case '"', '\\', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				// Only control characters without a short form are written \u00xx, in lowercase.
				if len(b)-j < 6 || b[j+2] != '0' || b[j+3] != '0' || (b[j+4] != '0' && b[j+4] != '1') {
					return j, esc, false
				}
				d, ok := unhex(b[j+5])
				if !ok {
					return j, esc, false
				}
				switch b[j+4]<<4 | d {
				case '\b', '\t', '\n', '\f', '\r':
					return j, esc, false
				}
				j += 6
			default:
				return j, esc, false
			}
		case c < 0x20:
			return j, esc, false
		case c < 0x80:
			j++
		default:
			r, size := utf8.DecodeRune(b[j:])
			if r == utf8.RuneError && size <= 1 {
				return j, esc, false
			}
			j += size
		}
	}
	return j, esc, false
}

// scanNumber accepts a number at b[i:] written as ECMAScript writes doubles (FORMAT.md §3).
func scanNumber(b []byte, i int) (int, bool) {
	j := i
	for j < len(b) {
		c := b[j]
		if c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' {
			j++
			continue
		}
		break
	}
	tok := b[i:j]
	// Common case: a short integer, which is exact and written as plain digits.
	digits := tok
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if n := len(digits); n >= 1 && n <= 15 && (digits[0] != '0' || n == 1 && len(tok) == 1) {
		allDigits := true
		for _, c := range digits {
			if c < '0' || c > '9' {
				allDigits = false
				break
			}
		}
		if allDigits {
			return j, true
		}
	}
	// Anything else: it must be byte-equal to the canonical form of the double it denotes.
	// (ParseFloat also reads forms that are not JSON, but none of those is ever canonical.)
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil {
		return i, false
	}
	var buf [32]byte
	if string(formatNumber(buf[:0], f)) != string(tok) {
		return i, false
	}
	return j, true
}
