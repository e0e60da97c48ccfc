package jsonscan

import (
	"unicode/utf16"
	"unicode/utf8"
)

// StringIs reports whether the raw string token tok (quotes included) decodes to s. escaped
// says whether tok contains escapes; without them the comparison allocates nothing.
func StringIs(tok []byte, escaped bool, s string) bool {
	if len(tok) < 2 {
		return false
	}
	inner := tok[1 : len(tok)-1]
	if !escaped {
		return string(inner) == s
	}
	if len(inner) < len(s) { // an escape never decodes to more bytes than it takes
		return false
	}
	var buf [64]byte
	dec := AppendUnquoted(buf[:0], tok)
	return string(dec) == s
}

// AppendUnquoted appends the decoded contents of the raw string token tok (quotes included,
// already validated by ScanString) to dst. Escapes of lone UTF-16 surrogates decode to
// U+FFFD, as encoding/json does; raw bytes are copied unchanged.
func AppendUnquoted(dst, tok []byte) []byte {
	s := tok[1 : len(tok)-1]
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			j := i + 1
			for j < len(s) && s[j] != '\\' {
				j++
			}
			dst = append(dst, s[i:j]...)
			i = j
			continue
		}
		switch s[i+1] {
		case '"', '\\', '/':
			dst = append(dst, s[i+1])
			i += 2
		case 'b':
			dst = append(dst, '\b')
			i += 2
		case 'f':
			dst = append(dst, '\f')
			i += 2
		case 'n':
			dst = append(dst, '\n')
			i += 2
		case 'r':
			dst = append(dst, '\r')
			i += 2
		case 't':
			dst = append(dst, '\t')
			i += 2
		case 'u':
			r := rune(hex4(s[i+2:]))
			i += 6
			if utf16.IsSurrogate(r) {
				r2 := utf8.RuneError
				if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
					r2 = utf16.DecodeRune(r, rune(hex4(s[i+2:])))
				}
				if r2 != utf8.RuneError {
					i += 6
					r = r2
				} else {
					r = utf8.RuneError
				}
			}
			dst = utf8.AppendRune(dst, r)
		default: // not reached for validated input
			dst = append(dst, s[i])
			i++
		}
	}
	return dst
}

func hex4(b []byte) int {
	v := 0
	for _, c := range b[:4] {
		v <<= 4
		switch {
		case c >= '0' && c <= '9':
			v |= int(c - '0')
		case c >= 'a' && c <= 'f':
			v |= int(c - 'a' + 10)
		default:
			v |= int(c - 'A' + 10)
		}
	}
	return v
}
