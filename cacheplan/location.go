package cacheplan

import "strconv"

// Section is the part of a request a location is in, in render order: tools, then system
// (Anthropic) or instructions (Responses), then messages or input.
type Section uint8

// The sections of a request.
const (
	SectionTop          Section = iota + 1 // a top-level member, such as the automatic cache_control
	SectionTools                           // the tools array
	SectionSystem                          // the system prompt (Anthropic Messages)
	SectionMessages                        // the messages array (Anthropic Messages)
	SectionInstructions                    // the instructions (OpenAI Responses)
	SectionInput                           // the input array (OpenAI Responses)
	SectionChat                            // the messages array (OpenAI Chat Completions)
)

// Location names a place in a request body by structure, never by content.
type Location struct {
	Section Section
	// Index is the tool, system block or message index; -1 for a string system prompt.
	Index int
	// Block is the content block index within a message; -1 for string content or when the
	// location is the message or tool itself.
	Block int
	// Sub is the index of a block nested in a tool_result's content; -1 when none.
	Sub int
	// Field names a member of an input item or a Chat message ("output", "content"), for
	// the OpenAI sections, Block then indexing into it; empty for the item or message itself,
	// or for its "content" when Block is set.
	Field string
}

// String returns the location as a JSON path, such as "messages[3].content[1]".
func (l Location) String() string {
	var buf [48]byte
	return string(l.appendPath(buf[:0]))
}

// appendPath appends the JSON path to b.
func (l Location) appendPath(b []byte) []byte {
	switch l.Section {
	case SectionTop:
		return append(b, "cache_control"...)
	case SectionTools:
		b = append(b, "tools"...)
		b = appendIndex(b, l.Index)
	case SectionSystem:
		b = append(b, "system"...)
		b = appendIndex(b, l.Index)
	case SectionMessages:
		b = append(b, "messages"...)
		b = appendIndex(b, l.Index)
		b = append(b, ".content"...)
		b = appendIndex(b, l.Block)
		if l.Sub >= 0 {
			b = append(b, ".content"...)
			b = appendIndex(b, l.Sub)
		}
	case SectionInstructions:
		return append(b, "instructions"...)
	case SectionInput, SectionChat:
		if l.Section == SectionInput {
			b = append(b, "input"...)
		} else {
			b = append(b, "messages"...)
		}
		b = appendIndex(b, l.Index)
		field := l.Field
		if field == "" && l.Block >= 0 {
			field = "content"
		}
		if field != "" {
			b = append(b, '.')
			b = append(b, field...)
		}
		b = appendIndex(b, l.Block)
	default:
		return append(b, '?')
	}
	return b
}

// MarshalText writes the JSON path, so a Location appears in --json output as a string.
func (l Location) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

func appendIndex(b []byte, i int) []byte {
	if i < 0 {
		return b
	}
	b = append(b, '[')
	b = strconv.AppendInt(b, int64(i), 10)
	return append(b, ']')
}

// before orders locations in render order.
func (l Location) before(m Location) bool {
	if l.Section != m.Section {
		return l.Section < m.Section
	}
	if l.Index != m.Index {
		return l.Index < m.Index
	}
	if l.Block != m.Block {
		return l.Block < m.Block
	}
	return l.Sub < m.Sub
}
