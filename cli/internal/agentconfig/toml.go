package agentconfig

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Codex keeps its configuration in TOML (~/.codex/config.toml, a project's .codex/config.toml).
// Setup never rewrites such a file: it appends tables of its own as text, and takes exactly that
// text out again, so the user's comments and layout stay as they are. To do that safely it reads
// the whole file first (TOML 1.0: comments, bare, quoted and dotted keys, [tables] and
// [[arrays of tables]], every kind of string, integers, floats, booleans, dates and times,
// arrays and inline tables) and refuses a file it cannot read, or one where a table it would
// append is already defined (which would make the file invalid for Codex).

// tkind is the kind of a TOML value.
type tkind byte

const (
	tString tkind = iota
	tInteger
	tFloat
	tBool
	tDatetime
	tArray
	tTable
)

// How a table came to be (tval.how): TOML lets each be extended in its own ways only.
const (
	byHeader   = 'h' // [a.b]
	byImplicit = 'i' // a parent of a header ([a] of [a.b]), not yet defined itself
	byDotted   = 'd' // a.b = 1 defines table a
	byInline   = 'l' // a = { ... }: complete, never extended
	byArray    = 'r' // an element of an array of tables ([[a]])
)

// tval is one TOML value; a table is one too (the document is the root table).
type tval struct {
	kind tkind
	str  string  // tString: the string; other scalars: their text
	arr  []*tval // tArray: the elements; for an array of tables, each a table
	aot  bool    // tArray: an array of tables ([[...]]), which headers may extend
	keys []string
	sub  map[string]*tval // tTable: members, in keys' order
	how  byte             // tTable: byHeader, byImplicit, byDotted, byInline or byArray
}

func newTable(how byte) *tval { return &tval{kind: tTable, sub: map[string]*tval{}, how: how} }

func (t *tval) put(k string, v *tval) {
	t.keys = append(t.keys, k)
	t.sub[k] = v
}

// lookup follows keys from a table (into the last element of an array of tables); nil when a
// key is missing.
func (t *tval) lookup(keys ...string) *tval {
	for _, k := range keys {
		if t == nil {
			return nil
		}
		if t.kind == tArray && t.aot && len(t.arr) > 0 {
			t = t.arr[len(t.arr)-1]
		}
		if t.kind != tTable {
			return nil
		}
		t = t.sub[k]
	}
	return t
}

// strs is an array of strings' values.
func (t *tval) strs() ([]string, bool) {
	if t == nil || t.kind != tArray || t.aot {
		return nil, false
	}
	var out []string
	for _, e := range t.arr {
		if e.kind != tString {
			return nil, false
		}
		out = append(out, e.str)
	}
	return out, true
}

// tomlError is a TOML syntax or structure error at a line.
type tomlError struct {
	line int
	msg  string
}

func (e *tomlError) Error() string {
	return fmt.Sprintf("not TOML setup can read, at line %d: %s", e.line, e.msg)
}

// parseTOML reads a whole TOML document.
func parseTOML(src string) (*tval, error) {
	doc, _, err := parseTOMLHeaders(src)
	return doc, err
}

// parseTOMLHeaders reads a whole TOML document, and where each table header's line starts.
func parseTOMLHeaders(src string) (*tval, []theader, error) {
	if !utf8.ValidString(src) {
		return nil, nil, &tomlError{1, "the file is not UTF-8"}
	}
	p := &tparser{src: src, line: 1, root: newTable(byHeader)}
	p.cur = p.root
	if err := p.document(); err != nil {
		return nil, nil, err
	}
	return p.root, p.headers, nil
}

type tparser struct {
	src     string
	pos     int
	line    int
	root    *tval
	cur     *tval     // the table key/value pairs go into
	headers []theader // every [table] and [[table]] header, in order

	lastHeader []string
}

// theader is a table header and where its line starts in the text.
type theader struct {
	keys  []string
	start int
}

func (p *tparser) fail(format string, args ...any) error {
	return &tomlError{p.line, fmt.Sprintf(format, args...)}
}

func (p *tparser) eof() bool { return p.pos >= len(p.src) }
func (p *tparser) peek() byte {
	if p.eof() {
		return 0
	}
	return p.src[p.pos]
}
func (p *tparser) rest() string { return p.src[p.pos:] }

// isNewline reports whether a newline (LF or CRLF) is next.
func (p *tparser) isNewline() bool {
	return p.peek() == '\n' || strings.HasPrefix(p.rest(), "\r\n")
}

// newline consumes one newline (LF or CRLF), reporting whether there was one.
func (p *tparser) newline() bool {
	switch {
	case p.peek() == '\n':
		p.pos++
	case strings.HasPrefix(p.rest(), "\r\n"):
		p.pos += 2
	default:
		return false
	}
	p.line++
	return true
}

func (p *tparser) skipSpace() {
	for !p.eof() && (p.peek() == ' ' || p.peek() == '\t') {
		p.pos++
	}
}

// endOfLine consumes optional space, an optional comment and the newline (or the end).
func (p *tparser) endOfLine() error {
	p.skipSpace()
	if p.peek() == '#' {
		if err := p.comment(); err != nil {
			return err
		}
	}
	if p.eof() || p.newline() {
		return nil
	}
	return p.fail("expected the end of the line, found %q", firstRune(p.rest()))
}

func (p *tparser) comment() error {
	for !p.eof() && p.peek() != '\n' {
		c := p.peek()
		if c == '\r' && strings.HasPrefix(p.rest(), "\r\n") {
			return nil
		}
		if c < 0x20 && c != '\t' || c == 0x7f {
			return p.fail("a control character in a comment")
		}
		p.pos++
	}
	return nil
}

func firstRune(s string) string {
	if s == "" {
		return ""
	}
	r, _ := utf8.DecodeRuneInString(s)
	return string(r)
}

func (p *tparser) document() error {
	for !p.eof() {
		p.skipSpace()
		switch c := p.peek(); {
		case c == '#' || c == '\n' || c == '\r' || c == 0:
			if err := p.endOfLine(); err != nil {
				return err
			}
		case c == '[':
			start := strings.LastIndexByte(p.src[:p.pos], '\n') + 1
			if err := p.header(); err != nil {
				return err
			}
			p.headers = append(p.headers, theader{keys: p.lastHeader, start: start})
		default:
			if err := p.keyValue(p.cur); err != nil {
				return err
			}
			if err := p.endOfLine(); err != nil {
				return err
			}
		}
	}
	return nil
}

// header reads [a.b] or [[a.b]] and makes that table the current one.
func (p *tparser) header() error {
	array := strings.HasPrefix(p.rest(), "[[")
	if array {
		p.pos += 2
	} else {
		p.pos++
	}
	p.skipSpace()
	keys, err := p.key()
	if err != nil {
		return err
	}
	p.lastHeader = keys
	p.skipSpace()
	closing := "]"
	if array {
		closing = "]]"
	}
	if !strings.HasPrefix(p.rest(), closing) {
		return p.fail("a table header not closed with %s", closing)
	}
	p.pos += len(closing)
	t := p.root
	for _, k := range keys[:len(keys)-1] {
		if t, err = p.descend(t, k, true); err != nil {
			return err
		}
	}
	last := keys[len(keys)-1]
	name := strings.Join(keys, ".")
	existing := t.sub[last]
	switch {
	case array && existing == nil:
		elem := newTable(byArray)
		t.put(last, &tval{kind: tArray, aot: true, arr: []*tval{elem}})
		p.cur = elem
	case array && existing.kind == tArray && existing.aot:
		elem := newTable(byArray)
		existing.arr = append(existing.arr, elem)
		p.cur = elem
	case array:
		return p.fail("[[%s]]: %s is already defined as something else", name, name)
	case existing == nil:
		nt := newTable(byHeader)
		t.put(last, nt)
		p.cur = nt
	case existing.kind == tTable && existing.how == byImplicit:
		existing.how = byHeader
		p.cur = existing
	default:
		return p.fail("[%s] is defined twice (or it is already a value)", name)
	}
	return p.endOfLine()
}

// descend returns member k of table t as a table to go into, creating it as implicit (for a
// header) or dotted (for a dotted key). Arrays of tables are entered at their last element.
func (p *tparser) descend(t *tval, k string, forHeader bool) (*tval, error) {
	v := t.sub[k]
	switch {
	case v == nil:
		how := byte(byImplicit)
		if !forHeader {
			how = byDotted
		}
		nt := newTable(how)
		t.put(k, nt)
		return nt, nil
	case v.kind == tArray && v.aot && forHeader:
		return v.arr[len(v.arr)-1], nil
	case v.kind != tTable || v.how == byInline:
		return nil, p.fail("%s is a value, not a table that can be added to", k)
	case !forHeader && (v.how == byHeader || v.how == byImplicit):
		return nil, p.fail("%s is a table defined by a header: dotted keys cannot add to it here", k)
	}
	return v, nil
}

// keyValue reads key = value into t.
func (p *tparser) keyValue(t *tval) error {
	keys, err := p.key()
	if err != nil {
		return err
	}
	p.skipSpace()
	if p.peek() != '=' {
		return p.fail("expected = after the key %s", strings.Join(keys, "."))
	}
	p.pos++
	p.skipSpace()
	v, err := p.value(0)
	if err != nil {
		return err
	}
	for _, k := range keys[:len(keys)-1] {
		if t, err = p.descend(t, k, false); err != nil {
			return err
		}
	}
	last := keys[len(keys)-1]
	if _, dup := t.sub[last]; dup {
		return p.fail("the key %s is defined twice", strings.Join(keys, "."))
	}
	t.put(last, v)
	return nil
}

var bareKey = regexp.MustCompile(`^[A-Za-z0-9_-]+`)

// key reads a key: bare, quoted or dotted.
func (p *tparser) key() ([]string, error) {
	var keys []string
	for {
		p.skipSpace()
		var k string
		switch p.peek() {
		case '"':
			if strings.HasPrefix(p.rest(), `"""`) {
				return nil, p.fail("a multi-line string cannot be a key")
			}
			s, err := p.basicString()
			if err != nil {
				return nil, err
			}
			k = s
		case '\'':
			if strings.HasPrefix(p.rest(), "'''") {
				return nil, p.fail("a multi-line string cannot be a key")
			}
			s, err := p.literalString()
			if err != nil {
				return nil, err
			}
			k = s
		default:
			m := bareKey.FindString(p.rest())
			if m == "" {
				return nil, p.fail("expected a key, found %q", firstRune(p.rest()))
			}
			p.pos += len(m)
			k = m
		}
		keys = append(keys, k)
		p.skipSpace()
		if p.peek() != '.' {
			return keys, nil
		}
		p.pos++
	}
}

var (
	tomlInteger  = regexp.MustCompile(`^(?:[+-]?(?:0|[1-9](?:_?[0-9])*)|0x[0-9A-Fa-f](?:_?[0-9A-Fa-f])*|0o[0-7](?:_?[0-7])*|0b[01](?:_?[01])*)$`)
	tomlFloat    = regexp.MustCompile(`^(?:[+-]?(?:0|[1-9](?:_?[0-9])*)(?:\.[0-9](?:_?[0-9])*)?(?:[eE][+-]?[0-9](?:_?[0-9])*)?|[+-]?(?:inf|nan))$`)
	tomlDate     = `[0-9]{4}-[0-9]{2}-[0-9]{2}`
	tomlTime     = `[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?`
	tomlOffset   = `(?:[Zz]|[+-][0-9]{2}:[0-9]{2})`
	tomlDatetime = regexp.MustCompile(`^(?:` + tomlDate + `(?:[Tt ]` + tomlTime + tomlOffset + `?)?|` + tomlTime + `)$`)
	scalarWord   = regexp.MustCompile(`^[0-9A-Za-z_.:+-]+`)
	dateThenTime = regexp.MustCompile(`^` + tomlDate + ` [0-9]{2}:`)
)

// maxTOMLDepth bounds arrays and inline tables nested in one another.
const maxTOMLDepth = 100

// value reads one value.
func (p *tparser) value(depth int) (*tval, error) {
	if depth > maxTOMLDepth {
		return nil, p.fail("values nested more than %d levels deep", maxTOMLDepth)
	}
	switch c := p.peek(); {
	case c == '"':
		var s string
		var err error
		if strings.HasPrefix(p.rest(), `"""`) {
			s, err = p.multiBasic()
		} else {
			s, err = p.basicString()
		}
		return &tval{kind: tString, str: s}, err
	case c == '\'':
		var s string
		var err error
		if strings.HasPrefix(p.rest(), "'''") {
			s, err = p.multiLiteral()
		} else {
			s, err = p.literalString()
		}
		return &tval{kind: tString, str: s}, err
	case c == '[':
		return p.array(depth)
	case c == '{':
		return p.inlineTable(depth)
	}
	word := scalarWord.FindString(p.rest())
	if word == "" {
		return nil, p.fail("expected a value, found %q", firstRune(p.rest()))
	}
	// A date and a time may be separated by one space.
	if dateThenTime.MatchString(p.rest()) {
		word = p.rest()[:11] + scalarWord.FindString(p.rest()[11:])
	}
	p.pos += len(word)
	switch {
	case word == "true" || word == "false":
		return &tval{kind: tBool, str: word}, nil
	case tomlInteger.MatchString(word):
		return &tval{kind: tInteger, str: word}, nil
	case tomlFloat.MatchString(word):
		return &tval{kind: tFloat, str: word}, nil
	case tomlDatetime.MatchString(word):
		return &tval{kind: tDatetime, str: word}, nil
	}
	return nil, p.fail("%q is not a TOML value (strings need quotes)", word)
}

// skipBlank skips white space, newlines and comments inside an array.
func (p *tparser) skipBlank() error {
	for {
		p.skipSpace()
		switch {
		case p.peek() == '#':
			if err := p.comment(); err != nil {
				return err
			}
		case p.newline():
		default:
			return nil
		}
	}
}

func (p *tparser) array(depth int) (*tval, error) {
	p.pos++ // [
	a := &tval{kind: tArray}
	for {
		if err := p.skipBlank(); err != nil {
			return nil, err
		}
		if p.peek() == ']' {
			p.pos++
			return a, nil
		}
		if p.eof() {
			return nil, p.fail("an array not closed with ]")
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		a.arr = append(a.arr, v)
		if err := p.skipBlank(); err != nil {
			return nil, err
		}
		switch p.peek() {
		case ',':
			p.pos++
		case ']':
			p.pos++
			return a, nil
		default:
			return nil, p.fail("expected , or ] in an array, found %q", firstRune(p.rest()))
		}
	}
}

func (p *tparser) inlineTable(depth int) (*tval, error) {
	p.pos++                 // {
	t := newTable(byDotted) // members may be dotted keys; frozen once read
	p.skipSpace()
	if p.peek() == '}' {
		p.pos++
		t.how = byInline
		return t, nil
	}
	for {
		p.skipSpace()
		keys, err := p.key()
		if err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.peek() != '=' {
			return nil, p.fail("expected = in an inline table")
		}
		p.pos++
		p.skipSpace()
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		into := t
		for _, k := range keys[:len(keys)-1] {
			if into, err = p.descend(into, k, false); err != nil {
				return nil, err
			}
		}
		if _, dup := into.sub[keys[len(keys)-1]]; dup {
			return nil, p.fail("the key %s is defined twice in an inline table", strings.Join(keys, "."))
		}
		into.put(keys[len(keys)-1], v)
		p.skipSpace()
		switch p.peek() {
		case ',':
			p.pos++
		case '}':
			p.pos++
			freeze(t)
			return t, nil
		default:
			return nil, p.fail("expected , or } in an inline table (it must be on one line), found %q", firstRune(p.rest()))
		}
	}
}

// freeze marks an inline table and the tables its dotted keys made as complete.
func freeze(t *tval) {
	t.how = byInline
	for _, v := range t.sub {
		if v.kind == tTable && v.how == byDotted {
			freeze(v)
		}
	}
}

func (p *tparser) basicString() (string, error) {
	p.pos++ // "
	var b strings.Builder
	for {
		if p.eof() {
			return "", p.fail("a string not closed with \"")
		}
		c := p.peek()
		switch {
		case c == '"':
			p.pos++
			return b.String(), nil
		case c == '\\':
			if err := p.escape(&b); err != nil {
				return "", err
			}
		case c == '\n' || c == '\r':
			return "", p.fail("a newline in a one-line string")
		case c < 0x20 && c != '\t' || c == 0x7f:
			return "", p.fail("a control character in a string")
		default:
			b.WriteByte(c)
			p.pos++
		}
	}
}

func (p *tparser) escape(b *strings.Builder) error {
	p.pos++ // backslash
	if p.eof() {
		return p.fail("a string ends in a backslash")
	}
	c := p.peek()
	p.pos++
	switch c {
	case 'b':
		b.WriteByte('\b')
	case 't':
		b.WriteByte('\t')
	case 'n':
		b.WriteByte('\n')
	case 'f':
		b.WriteByte('\f')
	case 'r':
		b.WriteByte('\r')
	case 'e':
		b.WriteByte(0x1b)
	case '"':
		b.WriteByte('"')
	case '\\':
		b.WriteByte('\\')
	case 'u', 'U', 'x':
		n := map[byte]int{'u': 4, 'U': 8, 'x': 2}[c]
		if len(p.rest()) < n {
			return p.fail("a short \\%c escape", c)
		}
		code, err := strconv.ParseUint(p.rest()[:n], 16, 32)
		if err != nil || !utf8.ValidRune(rune(code)) {
			return p.fail("\\%c%s is not a Unicode scalar value", c, p.rest()[:n])
		}
		p.pos += n
		b.WriteRune(rune(code))
	default:
		return p.fail("\\%c is not a TOML escape", c)
	}
	return nil
}

func (p *tparser) literalString() (string, error) {
	p.pos++ // '
	start := p.pos
	for {
		if p.eof() {
			return "", p.fail("a literal string not closed with '")
		}
		c := p.peek()
		switch {
		case c == '\'':
			s := p.src[start:p.pos]
			p.pos++
			return s, nil
		case c == '\n' || c == '\r':
			return "", p.fail("a newline in a one-line string")
		case c < 0x20 && c != '\t' || c == 0x7f:
			return "", p.fail("a control character in a string")
		}
		p.pos++
	}
}

// closes reports whether a multi-line string's closing quotes (""" or ”') are next, and
// consumes them; up to two more quotes before them belong to the content (five quotes are two
// of the content, then the closing), written to b.
func (p *tparser) closes(quote string, b *strings.Builder) bool {
	if !strings.HasPrefix(p.rest(), quote) {
		return false
	}
	n := 3
	for n < 5 && strings.HasPrefix(p.rest()[n:], quote[:1]) {
		n++
	}
	b.WriteString(strings.Repeat(quote[:1], n-3))
	p.pos += n
	return true
}

func (p *tparser) multiBasic() (string, error) {
	p.pos += 3
	p.newline() // a newline right after the opening is not content
	var b strings.Builder
	for {
		if p.eof() {
			return "", p.fail(`a multi-line string not closed with """`)
		}
		if p.closes(`"""`, &b) {
			return b.String(), nil
		}
		c := p.peek()
		switch {
		case c == '\\':
			// A line-ending backslash trims the newline and the white space that follows.
			rest := strings.TrimLeft(p.rest()[1:], " \t")
			if !strings.HasPrefix(rest, "\n") && !strings.HasPrefix(rest, "\r\n") {
				if err := p.escape(&b); err != nil {
					return "", err
				}
				continue
			}
			p.pos = len(p.src) - len(rest)
			for p.newline() || p.peek() == ' ' || p.peek() == '\t' {
				if p.peek() == ' ' || p.peek() == '\t' {
					p.pos++
				}
			}
		case p.isNewline():
			start := p.pos
			p.newline()
			b.WriteString(p.src[start:p.pos])
		case c < 0x20 && c != '\t' || c == 0x7f:
			return "", p.fail("a control character in a string")
		default:
			b.WriteByte(c)
			p.pos++
		}
	}
}

func (p *tparser) multiLiteral() (string, error) {
	p.pos += 3
	p.newline() // a newline right after the opening is not content
	var b strings.Builder
	for {
		if p.eof() {
			return "", p.fail("a multi-line literal string not closed with '''")
		}
		if p.closes("'''", &b) {
			return b.String(), nil
		}
		c := p.peek()
		switch {
		case p.isNewline():
			start := p.pos
			p.newline()
			b.WriteString(p.src[start:p.pos])
			continue
		case c < 0x20 && c != '\t' || c == 0x7f:
			return "", p.fail("a control character in a string")
		}
		b.WriteByte(c)
		p.pos++
	}
}

// tomlKey is k as a TOML key: bare when it can be, else a basic string.
func tomlKey(k string) string {
	if k != "" && bareKey.FindString(k) == k {
		return k
	}
	return tomlString(k)
}

// tomlString is s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
