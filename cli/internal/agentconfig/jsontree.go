package agentconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// A client's JSON configuration file is edited as a tree that keeps every member in the order
// the file has it, so that what setup writes back holds all of the user's entries, in their
// place, with agent-rewind's added; only the layout (two-space indentation) is setup's own.
// Numbers keep their text (json.Number), strings their value.

// jkind is the kind of a JSON value.
type jkind byte

const (
	jObject jkind = 'o'
	jArray  jkind = 'a'
	jScalar jkind = 's' // a string, number, boolean or null: raw holds it as compact JSON
)

// jnode is one JSON value.
type jnode struct {
	kind  jkind
	keys  []string // object: member names, in order
	vals  []*jnode // object: member values, parallel to keys
	elems []*jnode // array
	raw   string   // scalar: compact JSON text
}

// maxDepth bounds nesting: a configuration file nested deeper is refused rather than recursed
// into without end.
const maxDepth = 200

// parseJSON reads a whole JSON document. An empty file (or only white space) reads as an empty
// object: clients create settings files empty. Comments, trailing commas, a second document or a
// member named twice are refused: setup would otherwise drop what it cannot carry over.
func parseJSON(b []byte) (*jnode, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return &jnode{kind: jObject}, nil
	}
	if bytes.HasPrefix(b, []byte("\xef\xbb\xbf")) {
		return nil, errors.New("it starts with a byte-order mark, which JSON does not allow")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	n, err := readValue(dec, 0)
	if err != nil {
		return nil, jsonErr(b, dec, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("more follows the JSON value at byte %d (a second document, or a comment)", dec.InputOffset())
	}
	return n, nil
}

// jsonErr says where a JSON error is, as a line number a person can find.
func jsonErr(b []byte, dec *json.Decoder, err error) error {
	off := dec.InputOffset()
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off = se.Offset
	}
	if off > int64(len(b)) {
		off = int64(len(b))
	}
	line := 1 + bytes.Count(b[:off], []byte("\n"))
	msg := err.Error()
	if strings.Contains(msg, "invalid character '/'") {
		msg += " (a comment: this file must be plain JSON for setup to edit it)"
	}
	return fmt.Errorf("not JSON setup can edit, at line %d: %s", line, msg)
}

func readValue(dec *json.Decoder, depth int) (*jnode, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested more than %d levels deep", maxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &jnode{kind: jObject}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("a member name is not a string: %v", kt)
				}
				if n.index(k) >= 0 {
					return nil, fmt.Errorf("the member %q appears twice in one object", k)
				}
				v, err := readValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.keys, n.vals = append(n.keys, k), append(n.vals, v)
			}
			if _, err := dec.Token(); err != nil { // '}'
				return nil, err
			}
			return n, nil
		case '[':
			n := &jnode{kind: jArray}
			for dec.More() {
				v, err := readValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.elems = append(n.elems, v)
			}
			if _, err := dec.Token(); err != nil { // ']'
				return nil, err
			}
			return n, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		raw, err := scalarJSON(t)
		if err != nil {
			return nil, err
		}
		return &jnode{kind: jScalar, raw: raw}, nil
	}
}

// scalarJSON is a decoded scalar token as compact JSON.
func scalarJSON(v any) (string, error) {
	switch t := v.(type) {
	case nil:
		return "null", nil
	case bool:
		if t {
			return "true", nil
		}
		return "false", nil
	case json.Number:
		return t.String(), nil
	case string:
		return quoteJSON(t), nil
	}
	return "", fmt.Errorf("unexpected token %v", v)
}

// quoteJSON is s as a JSON string, without HTML escaping: hook command lines hold && and >,
// which json.Marshal would write as \u0026 and \u003e.
func quoteJSON(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// toJNode converts a Go value (as encoding/json would encode it) into a tree.
func toJNode(v any) (*jnode, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return parseJSON(b.Bytes())
}

// index returns the position of member k of an object, -1 when it has none.
func (n *jnode) index(k string) int {
	for i, key := range n.keys {
		if key == k {
			return i
		}
	}
	return -1
}

// get returns member k of an object (nil when absent or n is no object).
func (n *jnode) get(k string) *jnode {
	if n == nil || n.kind != jObject {
		return nil
	}
	if i := n.index(k); i >= 0 {
		return n.vals[i]
	}
	return nil
}

// set adds member k at the end of an object, or replaces its value in place.
func (n *jnode) set(k string, v *jnode) {
	if i := n.index(k); i >= 0 {
		n.vals[i] = v
		return
	}
	n.keys, n.vals = append(n.keys, k), append(n.vals, v)
}

// del removes member k of an object.
func (n *jnode) del(k string) {
	if i := n.index(k); i >= 0 {
		n.keys = append(n.keys[:i:i], n.keys[i+1:]...)
		n.vals = append(n.vals[:i:i], n.vals[i+1:]...)
	}
}

// at follows path (member names) from n; nil when a member is missing.
func (n *jnode) at(path []string) *jnode {
	for _, k := range path {
		if n = n.get(k); n == nil {
			return nil
		}
	}
	return n
}

// str is a string scalar's value ("", false for anything else).
func (n *jnode) str() (string, bool) {
	if n == nil || n.kind != jScalar || !strings.HasPrefix(n.raw, `"`) {
		return "", false
	}
	var s string
	if json.Unmarshal([]byte(n.raw), &s) != nil {
		return "", false
	}
	return s, true
}

// strs is an array of strings' values (false when n is not one).
func (n *jnode) strs() ([]string, bool) {
	if n == nil || n.kind != jArray {
		return nil, false
	}
	out := make([]string, 0, len(n.elems))
	for _, e := range n.elems {
		s, ok := e.str()
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// empty reports whether n is an object or array with nothing in it.
func (n *jnode) empty() bool {
	return n.kind == jObject && len(n.keys) == 0 || n.kind == jArray && len(n.elems) == 0
}

// clone is a deep copy of n.
func (n *jnode) clone() *jnode {
	c := &jnode{kind: n.kind, raw: n.raw, keys: append([]string(nil), n.keys...)}
	for _, v := range n.vals {
		c.vals = append(c.vals, v.clone())
	}
	for _, e := range n.elems {
		c.elems = append(c.elems, e.clone())
	}
	return c
}

// equal reports whether two values are the same JSON value: objects with the same members (in
// any order), arrays with the same elements in order, scalars with the same meaning.
func equal(a, b *jnode) bool {
	if a == nil || b == nil || a.kind != b.kind {
		return a == nil && b == nil
	}
	switch a.kind {
	case jObject:
		if len(a.keys) != len(b.keys) {
			return false
		}
		for i, k := range a.keys {
			if !equal(a.vals[i], b.get(k)) {
				return false
			}
		}
		return true
	case jArray:
		if len(a.elems) != len(b.elems) {
			return false
		}
		for i := range a.elems {
			if !equal(a.elems[i], b.elems[i]) {
				return false
			}
		}
		return true
	}
	if a.raw == b.raw {
		return true
	}
	// "\u0026" and "&" are one string; 1.0 and 1 are not compared as numbers (the text is kept).
	as, aok := a.str()
	bs, bok := b.str()
	return aok && bok && as == bs
}

// encode writes n as indented JSON with a final newline.
func (n *jnode) encode() []byte {
	var b bytes.Buffer
	n.write(&b, "")
	b.WriteByte('\n')
	return b.Bytes()
}

// compact is n as one line of JSON (for records and summaries).
func (n *jnode) compact() string {
	var b bytes.Buffer
	n.writeCompact(&b)
	return b.String()
}

func (n *jnode) write(b *bytes.Buffer, indent string) {
	switch n.kind {
	case jObject:
		if len(n.keys) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{\n")
		for i, k := range n.keys {
			b.WriteString(indent + "  " + quoteJSON(k) + ": ")
			n.vals[i].write(b, indent+"  ")
			if i < len(n.keys)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "}")
	case jArray:
		if len(n.elems) == 0 {
			b.WriteString("[]")
			return
		}
		if n.scalars() {
			// A list of strings (args, matchers) on one line, as people write them.
			n.writeCompact(b)
			return
		}
		b.WriteString("[\n")
		for i, e := range n.elems {
			b.WriteString(indent + "  ")
			e.write(b, indent+"  ")
			if i < len(n.elems)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "]")
	default:
		b.WriteString(n.raw)
	}
}

// scalars reports whether an array holds only short scalars.
func (n *jnode) scalars() bool {
	total := 0
	for _, e := range n.elems {
		if e.kind != jScalar {
			return false
		}
		total += len(e.raw) + 2
	}
	return total <= 100
}

func (n *jnode) writeCompact(b *bytes.Buffer) {
	switch n.kind {
	case jObject:
		b.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(quoteJSON(k) + ": ")
			n.vals[i].writeCompact(b)
		}
		b.WriteByte('}')
	case jArray:
		b.WriteByte('[')
		for i, e := range n.elems {
			if i > 0 {
				b.WriteString(", ")
			}
			e.writeCompact(b)
		}
		b.WriteByte(']')
	default:
		b.WriteString(n.raw)
	}
}
