package agentconfig

import (
	"fmt"
	"strings"
)

// Tables setup appends to a TOML file, and takes out again, as text: the user's comments and
// layout are never touched.

// tomlTable is one table setup would append: its key path and its members, in order.
type tomlTable struct {
	keys    []string
	members []tomlMember
	comment string // a comment line above the header saying who wrote it
}

type tomlMember struct {
	key   string
	value string // TOML text
}

// text is the table as it is appended.
func (t tomlTable) text() string {
	var b strings.Builder
	if t.comment != "" {
		b.WriteString("# " + t.comment + "\n")
	}
	parts := make([]string, len(t.keys))
	for i, k := range t.keys {
		parts[i] = tomlKey(k)
	}
	b.WriteString("[" + strings.Join(parts, ".") + "]\n")
	for _, m := range t.members {
		b.WriteString(tomlKey(m.key) + " = " + m.value + "\n")
	}
	return b.String()
}

// tomlText writes a value read from a shipped file back as TOML text.
func tomlText(v *tval) string {
	switch v.kind {
	case tString:
		return tomlString(v.str)
	case tArray:
		parts := make([]string, len(v.arr))
		for i, e := range v.arr {
			parts[i] = tomlText(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case tTable:
		parts := make([]string, len(v.keys))
		for i, k := range v.keys {
			parts[i] = tomlKey(k) + " = " + tomlText(v.sub[k])
		}
		return "{ " + strings.Join(parts, ", ") + " }"
	}
	return v.str
}

// canAppend says why table keys cannot be appended to doc ("" when it can): it is already
// defined (then existing is it), or a key on the way is a value or an inline table.
func canAppend(doc *tval, keys []string) (why string, existing *tval) {
	t := doc
	for i, k := range keys {
		v := t.sub[k]
		if v == nil {
			return "", nil
		}
		name := dottedTOML(keys[:i+1])
		if i == len(keys)-1 {
			return name + " is already defined", v
		}
		switch {
		case v.kind == tArray && v.aot:
			return name + " is an array of tables ([[" + name + "]]): setup cannot tell which element to add to", nil
		case v.kind != tTable:
			return name + " is a value, not a table", nil
		case v.how == byInline:
			return name + " is an inline table ({ ... }), which TOML does not let a [table] extend", nil
		}
		t = v
	}
	return "", nil
}

func dottedTOML(keys []string) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = tomlKey(k)
	}
	return strings.Join(parts, ".")
}

// appendBlock appends block to src, a blank line between them.
func appendBlock(src, block string) string {
	switch {
	case strings.TrimSpace(src) == "":
		return block
	case strings.HasSuffix(src, "\n\n"):
		return src + block
	case strings.HasSuffix(src, "\n"):
		return src + "\n" + block
	}
	return src + "\n\n" + block
}

// removeBlock takes the last occurrence of block out of src, with the blank line appendBlock
// put before it; ok is false when block is not there as it was appended.
func removeBlock(src, block string) (string, bool) {
	i := strings.LastIndex(src, block)
	if i < 0 || i > 0 && src[i-1] != '\n' {
		return src, false
	}
	before, after := src[:i], src[i+len(block):]
	if strings.HasSuffix(before, "\n\n") {
		before = before[:len(before)-1]
	}
	if strings.TrimSpace(before) == "" {
		before = ""
	}
	return before + after, true
}

// shippedTable reads the table at keys of a shipped TOML file, for setup to append with its
// values filled in.
func shippedTable(rel string, keys []string, fill func(key string, v *tval) string) (tomlTable, error) {
	src, err := shippedFile(rel)
	if err != nil {
		return tomlTable{}, err
	}
	doc, err := parseTOML(src)
	if err != nil {
		return tomlTable{}, fmt.Errorf("integrations/%s: %w", rel, err)
	}
	t := doc.lookup(keys...)
	if t == nil || t.kind != tTable {
		return tomlTable{}, fmt.Errorf("integrations/%s has no table [%s]", rel, dottedTOML(keys))
	}
	out := tomlTable{keys: keys}
	for _, k := range t.keys {
		out.members = append(out.members, tomlMember{k, fill(k, t.sub[k])})
	}
	return out, nil
}

// cutTable takes the table at keys out of src, with its sub-tables: each section from its header
// line to the next header (or the end). ok is false when the table has no header of its own
// (dotted keys or an inline table define it): it cannot be cut out as text then.
func cutTable(src string, headers []theader, keys []string) (rest, cut string, ok bool) {
	type span struct{ from, to int }
	var spans []span
	for i, h := range headers {
		if len(h.keys) < len(keys) || !equalKeys(h.keys[:len(keys)], keys) {
			continue
		}
		ok = ok || len(h.keys) == len(keys)
		to := len(src)
		if i+1 < len(headers) {
			to = headers[i+1].start
		}
		spans = append(spans, span{h.start, to})
	}
	if !ok {
		return src, "", false
	}
	var b strings.Builder
	rest = src
	for i := len(spans) - 1; i >= 0; i-- {
		s := spans[i]
		rest = rest[:s.from] + rest[s.to:]
	}
	for _, s := range spans {
		b.WriteString(src[s.from:s.to])
	}
	cut = b.String()
	if !strings.HasSuffix(cut, "\n") {
		cut += "\n"
	}
	return rest, cut, true
}

func equalKeys(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
