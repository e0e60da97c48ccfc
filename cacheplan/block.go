package cacheplan

import "github.com/agent-rewind/rewind/internal/jsonscan"

// blockKind is the "type" of a content block, as far as planning and pruning care.
type blockKind uint8

const (
	kindOther blockKind = iota
	kindText
	kindThinking // thinking and redacted_thinking: the provider refuses cache_control on them
	kindToolResult
	kindUntyped // no "type" string: not a block the planner touches
)

// marker is what a block says about its own cache_control member.
type marker struct {
	present bool // a cache_control member with a non-null value
	null    bool // "cache_control": null: not a breakpoint, but the key is taken
	ttl     TTL  // the ttl field, TTL5m when absent
	badTTL  bool // a ttl other than "5m" or "1h"
}

// block is what the planner and pruner need to know about one content block (or tool, or
// system block: they share the object shape that matters here).
type block struct {
	start, end int // the object's bytes: data[start] == '{', data[end-1] == '}'
	members    int // a marker can only be added to an object with members
	kind       blockKind
	emptyText  bool // a text block whose text is ""
	dup        bool // a key this package reads appears twice: ambiguous, left alone
	cc         marker
	// tool_result only
	idStart, idEnd int // the raw tool_use_id string token, idEnd == 0 when absent
	idEscaped      bool
	contentStart   int // the content value's bytes; contentEnd == 0 when absent
	contentEnd     int
	nested         []nestedMarker
	marks          shape // members and types only one API has
	breakpoint     bool  // a non-null prompt_cache_breakpoint (OpenAI's cache marker)
}

// nestedMarker is a cache_control marker on a block nested in a tool_result's content.
type nestedMarker struct {
	sub int
	cc  marker
}

// cacheable reports whether a planner may add cache_control to this block.
func (b *block) cacheable() bool {
	return b.kind != kindThinking && b.kind != kindUntyped && !b.emptyText && !b.dup && !b.cc.present && !b.cc.null
}

// readBlock reads the object at data[i] (callers check data[i] == '{'). nested is scratch
// space for markers in a tool_result's content, reused across calls.
func readBlock(data []byte, i, depth int, nested []nestedMarker) (block, error) {
	b := block{start: i, nested: nested[:0]}
	o, err := jsonscan.OpenObject(data, i, depth)
	if err != nil {
		return b, err
	}
	var seenType, seenText, seenCC, seenContent, seenID bool
	contentIsArray := false
	for o.Next() {
		v := o.Value()
		switch {
		case o.KeyIs("type"):
			b.dup = b.dup || seenType
			seenType = true
			if data[v] != '"' {
				continue
			}
			end, esc, err := jsonscan.ScanString(data, v)
			if err != nil {
				return b, err
			}
			o.Consumed(end)
			tok := data[v:end]
			switch {
			case jsonscan.StringIs(tok, esc, "text"):
				b.kind = kindText
			case jsonscan.StringIs(tok, esc, "thinking"), jsonscan.StringIs(tok, esc, "redacted_thinking"):
				b.kind = kindThinking
				b.marks.anthropic = true
			case jsonscan.StringIs(tok, esc, "tool_result"):
				b.kind = kindToolResult
				b.marks.anthropic = true
			default:
				b.kind = kindOther
				b.marks.blockType(tok, esc)
			}
		case o.KeyIs("text"):
			b.dup = b.dup || seenText
			seenText = true
			if data[v] == '"' && v+1 < len(data) && data[v+1] == '"' {
				b.emptyText = true
			}
		case o.KeyIs("cache_control"):
			b.dup = b.dup || seenCC
			seenCC = true
			m, end, err := readMarker(data, v, o.Depth())
			if err != nil {
				return b, err
			}
			o.Consumed(end)
			b.cc = m
			b.marks.anthropic = true
		case o.KeyIs("tool_use_id"):
			b.dup = b.dup || seenID
			seenID = true
			if data[v] == '"' {
				end, esc, err := jsonscan.ScanString(data, v)
				if err != nil {
					return b, err
				}
				o.Consumed(end)
				b.idStart, b.idEnd, b.idEscaped = v, end, esc
			}
		case o.KeyIs("content"):
			b.dup = b.dup || seenContent
			seenContent = true
			end, err := jsonscan.SkipValue(data, v, o.Depth())
			if err != nil {
				return b, err
			}
			o.Consumed(end)
			b.contentStart, b.contentEnd = v, end
			contentIsArray = data[v] == '['
		default:
			b.marks.blockKey(&o)
			if o.KeyIs("prompt_cache_breakpoint") && data[v] != 'n' {
				b.breakpoint = true
			}
		}
	}
	if err := o.Err(); err != nil {
		return b, err
	}
	b.end = o.End()
	b.members = o.Len()
	if !seenType {
		b.kind = kindUntyped
	}
	if b.kind == kindToolResult && contentIsArray {
		// Markers on nested blocks count as client-supplied breakpoints too.
		a, _ := jsonscan.OpenArray(data, b.contentStart, depth+1)
		for a.Next() {
			if data[a.Value()] != '{' {
				continue
			}
			sub, err := jsonscan.OpenObject(data, a.Value(), a.Depth())
			if err != nil {
				return b, err
			}
			for sub.Next() {
				if sub.KeyIs("cache_control") {
					m, end, err := readMarker(data, sub.Value(), sub.Depth())
					if err != nil {
						return b, err
					}
					sub.Consumed(end)
					if m.present {
						b.nested = append(b.nested, nestedMarker{sub: a.Index(), cc: m})
					}
				}
			}
			if err := sub.Err(); err != nil {
				return b, err
			}
			a.Consumed(sub.End())
		}
		if err := a.Err(); err != nil {
			return b, err
		}
	}
	return b, nil
}

// readMarker reads a cache_control value.
func readMarker(data []byte, i, depth int) (marker, int, error) {
	m := marker{ttl: TTL5m}
	if data[i] == 'n' {
		end, err := jsonscan.SkipValue(data, i, depth)
		m.null = true
		return m, end, err
	}
	m.present = true
	if data[i] != '{' {
		end, err := jsonscan.SkipValue(data, i, depth)
		return m, end, err
	}
	o, err := jsonscan.OpenObject(data, i, depth)
	if err != nil {
		return m, i, err
	}
	for o.Next() {
		if !o.KeyIs("ttl") {
			continue
		}
		v := o.Value()
		if data[v] != '"' {
			m.badTTL = true
			continue
		}
		end, esc, err := jsonscan.ScanString(data, v)
		if err != nil {
			return m, end, err
		}
		o.Consumed(end)
		switch tok := data[v:end]; {
		case jsonscan.StringIs(tok, esc, "5m"):
			m.ttl = TTL5m
		case jsonscan.StringIs(tok, esc, "1h"):
			m.ttl = TTL1h
		default:
			m.badTTL = true
		}
	}
	return m, o.End(), o.Err()
}
