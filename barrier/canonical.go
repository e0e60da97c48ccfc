package barrier

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrNotCanonicalizable reports a payload that is not a single well-formed JSON value, or that
// holds an object with a repeated member name (which would make its meaning ambiguous).
var ErrNotCanonicalizable = errors.New("payload is not canonicalizable JSON")

// Canonical returns the canonical JSON encoding of the single JSON value in data, the form whose
// SHA-256 is a payload's fingerprint. Two payloads that mean the same JSON value have the same
// canonical form:
//
//   - no insignificant whitespace;
//   - object members sorted by name, comparing the names' UTF-8 bytes; a repeated name is an error;
//   - strings written with the short escapes \" \\ \b \f \n \r \t, other control characters as
//     \u00xx (lowercase hex), and every other character as itself in UTF-8 (no HTML escaping);
//     invalid UTF-8 is an error (a lone surrogate escape such as \ud800 reads as U+FFFD);
//   - an integer literal (digits with an optional minus, no fraction or exponent) is kept as
//     written, except that -0 becomes 0, so integers of any size keep their exact value;
//   - any other number is parsed as an IEEE-754 double and written as the shortest decimal that
//     reads back to it (strconv 'g' format, e.g. 1.5, 1e+21, 2.5e-07), or as an integer when it
//     is integral and below 2^53 in magnitude, so 1.0, 1e0 and 1 are the same value.
//
// Empty input (or only whitespace) is the JSON value null, so an absent payload and an explicit
// null have the same fingerprint.
func Canonical(data []byte) ([]byte, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return []byte("null"), nil
	}
	// encoding/json quietly turns invalid UTF-8 into U+FFFD while decoding, which would let two
	// different payloads share a fingerprint: refuse it here, on the raw bytes.
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("%w: the JSON text is not valid UTF-8", ErrNotCanonicalizable)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out bytes.Buffer
	if err := canonicalValue(dec, &out); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotCanonicalizable, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: more than one JSON value (or trailing data) after the first", ErrNotCanonicalizable)
	}
	return out.Bytes(), nil
}

// Fingerprint returns "sha256:" followed by the lowercase hex SHA-256 of the canonical form of
// data (see Canonical).
func Fingerprint(data []byte) (string, error) {
	c, err := Canonical(data)
	if err != nil {
		return "", err
	}
	return fingerprintCanonical(c), nil
}

func fingerprintCanonical(canonical []byte) string {
	sum := sha256.Sum256(canonical)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func canonicalValue(dec *json.Decoder, out *bytes.Buffer) error {
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return errors.New("unexpected end of input")
		}
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			return canonicalObject(dec, out)
		case '[':
			out.WriteByte('[')
			for i := 0; dec.More(); i++ {
				if i > 0 {
					out.WriteByte(',')
				}
				if err := canonicalValue(dec, out); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil { // the closing ']'
				return err
			}
			out.WriteByte(']')
			return nil
		default:
			return fmt.Errorf("unexpected %q", rune(t))
		}
	case string:
		return canonicalString(t, out)
	case json.Number:
		s, err := canonicalNumber(string(t))
		if err != nil {
			return err
		}
		out.WriteString(s)
		return nil
	case bool:
		if t {
			out.WriteString("true")
		} else {
			out.WriteString("false")
		}
		return nil
	case nil:
		out.WriteString("null")
		return nil
	}
	return fmt.Errorf("unexpected token %v", tok)
}

func canonicalObject(dec *json.Decoder, out *bytes.Buffer) error {
	type member struct {
		name  string
		value []byte
	}
	var members []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		name, ok := tok.(string)
		if !ok {
			return fmt.Errorf("object member name is %v, not a string", tok)
		}
		var v bytes.Buffer
		if err := canonicalValue(dec, &v); err != nil {
			return err
		}
		members = append(members, member{name, v.Bytes()})
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return err
	}
	slices.SortFunc(members, func(a, b member) int { return strings.Compare(a.name, b.name) })
	out.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			if members[i-1].name == m.name {
				return fmt.Errorf("object member %q appears more than once", m.name)
			}
			out.WriteByte(',')
		}
		if err := canonicalString(m.name, out); err != nil {
			return err
		}
		out.WriteByte(':')
		out.Write(m.value)
	}
	out.WriteByte('}')
	return nil
}

const hexDigits = "0123456789abcdef"

func canonicalString(s string, out *bytes.Buffer) error {
	if !utf8.ValidString(s) { // unreachable after the raw check in Canonical; kept for safety
		return fmt.Errorf("string %q is not valid UTF-8", s)
	}
	out.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			out.WriteString(`\"`)
		case c == '\\':
			out.WriteString(`\\`)
		case c == '\b':
			out.WriteString(`\b`)
		case c == '\f':
			out.WriteString(`\f`)
		case c == '\n':
			out.WriteString(`\n`)
		case c == '\r':
			out.WriteString(`\r`)
		case c == '\t':
			out.WriteString(`\t`)
		case c < 0x20:
			out.WriteString(`\u00`)
			out.WriteByte(hexDigits[c>>4])
			out.WriteByte(hexDigits[c&0xf])
		default:
			out.WriteByte(c)
		}
	}
	out.WriteByte('"')
	return nil
}

func canonicalNumber(lit string) (string, error) {
	if isIntegerLiteral(lit) {
		if lit == "-0" {
			return "0", nil
		}
		return lit, nil
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return "", fmt.Errorf("number %s is out of range for a double", lit)
	}
	if f == 0 {
		return "0", nil
	}
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return strconv.FormatInt(int64(f), 10), nil
	}
	return strconv.FormatFloat(f, 'g', -1, 64), nil
}

func isIntegerLiteral(s string) bool {
	if strings.HasPrefix(s, "-") {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
