package jsonscan

import (
	"encoding/binary"
	"math/bits"
	"strconv"
)

// MaxDepth is the deepest nesting of objects and arrays accepted, the same limit as
// encoding/json, so that a hostile body cannot exhaust the stack.
const MaxDepth = 10000

// Error is a syntax error at a byte offset. What is a fixed description: never input bytes.
type Error struct {
	Offset int
	What   string
}

func (e *Error) Error() string {
	return "invalid JSON at byte " + strconv.Itoa(e.Offset) + ": " + e.What
}

func errAt(off int, what string) error { return &Error{Offset: off, What: what} }

// SkipSpace returns the offset of the first byte at or after i that is not JSON whitespace.
func SkipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// Valid reports whether data is exactly one JSON value, optionally surrounded by whitespace.
func Valid(data []byte) bool {
	end, err := SkipValue(data, SkipSpace(data, 0), 0)
	return err == nil && SkipSpace(data, end) == len(data)
}

// CheckDocument returns nil if data is exactly one JSON value surrounded by optional
// whitespace, or the first syntax error.
func CheckDocument(data []byte) error {
	end, err := SkipValue(data, SkipSpace(data, 0), 0)
	if err != nil {
		return err
	}
	if i := SkipSpace(data, end); i != len(data) {
		return errAt(i, "unexpected data after the top-level value")
	}
	return nil
}

// SkipValue validates the value starting at data[i] (no leading whitespace) and returns the
// offset just past it. depth is the number of containers already open around it.
func SkipValue(data []byte, i, depth int) (int, error) {
	if i >= len(data) {
		return i, errAt(i, "unexpected end of input, expected a value")
	}
	switch c := data[i]; c {
	case '{':
		return skipObject(data, i, depth+1)
	case '[':
		return skipArray(data, i, depth+1)
	case '"':
		end, _, err := ScanString(data, i)
		return end, err
	case 't':
		return scanLiteral(data, i, "true")
	case 'f':
		return scanLiteral(data, i, "false")
	case 'n':
		return scanLiteral(data, i, "null")
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			return ScanNumber(data, i)
		}
		return i, errAt(i, "expected a value")
	}
}

func skipObject(data []byte, i, depth int) (int, error) {
	if depth > MaxDepth {
		return i, errAt(i, "nested too deeply")
	}
	i = SkipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return i, errAt(i, "expected a string object key")
		}
		var err error
		if i, _, err = ScanString(data, i); err != nil {
			return i, err
		}
		i = SkipSpace(data, i)
		if i >= len(data) || data[i] != ':' {
			return i, errAt(i, "expected ':' after object key")
		}
		if i, err = SkipValue(data, SkipSpace(data, i+1), depth); err != nil {
			return i, err
		}
		i = SkipSpace(data, i)
		if i < len(data) {
			switch data[i] {
			case ',':
				i = SkipSpace(data, i+1)
				continue
			case '}':
				return i + 1, nil
			}
		}
		return i, errAt(i, "expected ',' or '}' in object")
	}
}

func skipArray(data []byte, i, depth int) (int, error) {
	if depth > MaxDepth {
		return i, errAt(i, "nested too deeply")
	}
	i = SkipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return i + 1, nil
	}
	for {
		var err error
		if i, err = SkipValue(data, i, depth); err != nil {
			return i, err
		}
		i = SkipSpace(data, i)
		if i < len(data) {
			switch data[i] {
			case ',':
				i = SkipSpace(data, i+1)
				continue
			case ']':
				return i + 1, nil
			}
		}
		return i, errAt(i, "expected ',' or ']' in array")
	}
}

func scanLiteral(data []byte, i int, lit string) (int, error) {
	if len(data)-i >= len(lit) && string(data[i:i+len(lit)]) == lit {
		return i + len(lit), nil
	}
	return i, errAt(i, "invalid literal")
}

// ScanNumber validates the number starting at data[i] and returns the offset just past it.
func ScanNumber(data []byte, i int) (int, error) {
	start := i
	if i < len(data) && data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case i < len(data) && data[i] >= '1' && data[i] <= '9':
		i++
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}
	default:
		return start, errAt(i, "invalid number")
	}
	if i < len(data) && data[i] == '.' {
		i++
		if i >= len(data) || data[i] < '0' || data[i] > '9' {
			return start, errAt(i, "invalid number: digit expected after '.'")
		}
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i >= len(data) || data[i] < '0' || data[i] > '9' {
			return start, errAt(i, "invalid number: digit expected in exponent")
		}
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}
	}
	return i, nil
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// special returns a mask with the high bit set in the bytes of x (little-endian) that may be
// a quote, a backslash or a control character: the bytes that end the fast path of
// ScanString. The tests are the classic "has a byte less than n" and "has a zero byte" bit
// tricks: exact for whether any byte matches, and the lowest flagged byte is always a real
// match (borrows only flag bytes above one).
func special(x uint64) uint64 {
	q := x ^ (lsb * '"')
	b := x ^ (lsb * '\\')
	return ((x-lsb*0x20)&^x | (q-lsb)&^q | (b-lsb)&^b) & msb
}

// ScanString validates the string starting at data[i] == '"' and returns the offset just past
// its closing quote and whether it contains any escape sequence.
func ScanString(data []byte, i int) (end int, escaped bool, err error) {
	j := i + 1
	for {
		for j+8 <= len(data) {
			if m := special(binary.LittleEndian.Uint64(data[j:])); m != 0 {
				j += bits.TrailingZeros64(m) >> 3 // the first byte that needs a look
				break
			}
			j += 8
		}
		if j >= len(data) {
			return j, escaped, errAt(i, "unterminated string")
		}
		c := data[j]
		switch {
		case c == '"':
			return j + 1, escaped, nil
		case c == '\\':
			escaped = true
			if j+1 >= len(data) {
				return j, escaped, errAt(i, "unterminated string")
			}
			switch data[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				if j+6 > len(data) || !isHex(data[j+2]) || !isHex(data[j+3]) || !isHex(data[j+4]) || !isHex(data[j+5]) {
					return j, escaped, errAt(j, "invalid \\u escape in string")
				}
				j += 6
			default:
				return j, escaped, errAt(j, "invalid escape in string")
			}
		case c < 0x20:
			return j, escaped, errAt(j, "control character in string")
		default:
			j++
		}
	}
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}
