package cacheplan

import (
	"bytes"
	"hash/maphash"
	"sync"

	"github.com/agent-rewind/rewind/internal/jsonscan"
)

// DefaultPruneMinBytes is the smallest tool output the pruner replaces when
// PruneOptions.MinBytes is 0: below it a reference saves too little to be worth changing
// what the model sees.
const DefaultPruneMinBytes = 256

// PruneOptions tune the pruner.
type PruneOptions struct {
	// MinBytes is the smallest content, in JSON bytes, that is replaced by a reference
	// (DefaultPruneMinBytes when 0). A reference is never longer than what it replaces.
	MinBytes int
	// Format is the API the body is for when the caller knows it (a gateway does, from the
	// request path): FormatMessages, FormatResponses or FormatOpenAIChat. Empty means
	// detect it from the body's shape.
	Format Format
}

// PruneResult says what the pruner did, without any body text.
type PruneResult struct {
	Format Format `json:"format"`
	// Detection says how Format was decided; empty for FormatOther.
	Detection Detection `json:"formatDetection,omitempty"`
	// Reason explains a pass-through (a body in no supported format); empty otherwise.
	Reason string `json:"reason,omitempty"`
	// ToolResults counts the tool outputs seen: Anthropic tool_result blocks, Responses
	// function_call_output and custom_tool_call_output items, Chat Completions tool messages.
	ToolResults int `json:"toolResults"`
	Pruned      int `json:"pruned"` // of which replaced by a reference
	BytesBefore int `json:"bytesBefore"`
	BytesAfter  int `json:"bytesAfter"`
	BytesSaved  int `json:"bytesSaved"`
	// EstimatedTokensSaved is BytesSaved / 4: an estimate, and fewer tokens sent is not
	// necessarily a smaller bill once prompt caching is counted.
	EstimatedTokensSaved int              `json:"estimatedTokensSaved"`
	References           []PruneReference `json:"references"`
}

// PruneReference is one replaced tool output.
type PruneReference struct {
	// Location is the replaced output: an Anthropic tool_result block
	// ("messages[4].content[0]", whose content was replaced), a Responses item's output
	// ("input[9].output") or a Chat tool message's content ("messages[5].content").
	Location Location `json:"location"`
	First    Location `json:"first"` // the earlier output with the full, identical content
	Bytes    int      `json:"bytes"` // size of the replaced content
}

// toolOutput is one tool output a walker found: where its content is and what names it.
type toolOutput struct {
	loc        Location
	start, end int // the content value's bytes; end == 0 when absent
	idStart    int // the raw call id token; idEnd == 0 when absent
	idEnd      int
	idEscaped  bool
	keep       bool // never replaced: a member read here appears twice, or the content holds a cache marker
}

type replacement struct {
	start, end int // the content value's bytes
	first      int // index into firsts
	loc        Location
}

type firstResult struct {
	loc          Location
	start, end   int // content bytes
	idStart      int // raw call id token, idEnd == 0 when unusable
	idEnd        int
	referenceLen int
}

type pruneScratch struct {
	seen      map[uint64]int
	firsts    []firstResult
	repl      []replacement
	nested    []nestedMarker
	outs      []toolOutput // Anthropic tool_result blocks
	chatOuts  []toolOutput // Chat Completions tool messages (a messages body may be either)
	inputOuts []toolOutput // Responses output items
}

var (
	pruneSeed = maphash.MakeSeed()
	prunePool = sync.Pool{New: func() any { return &pruneScratch{seen: map[uint64]int{}} }}
)

// idName is the member that names the call an output answers, per format: the reference
// quotes the first output's id under that name.
func idName(f Format) string {
	switch f {
	case FormatResponses:
		return "call_id"
	case FormatOpenAIChat:
		return "tool_call_id"
	}
	return "tool_use_id"
}

// Prune collapses repeated identical tool outputs: every one whose content is byte for byte
// the content of an earlier one is given a short reference to that first full one instead.
// The outputs are Anthropic tool_result blocks' content, OpenAI Responses
// function_call_output and custom_tool_call_output items' output, and OpenAI Chat
// Completions tool messages' content. Only those values change; every other byte of the
// body is kept, the call ids included, so every call still has its answer.
//
// "Identical" is the content alone: two outputs always answer different calls, so their
// call ids differ, and an output that repeats an earlier one's bytes under another call id
// is a repeat. The reference names the first output's place and call id.
//
// The format is opts.Format, or detected from the body's shape. A body in no supported
// format comes back unchanged, with Format FormatOther and Reason saying why. The only error
// is ErrInvalidJSON, with body returned unchanged.
//
// The decision for an output depends only on the outputs before it, so pruning an agent
// loop's growing conversation gives every request the same pruned prefix as the one before:
// pruning does not break prompt caching by itself. An output whose content carries a cache
// marker (cache_control, prompt_cache_breakpoint) is never pruned.
func Prune(body []byte, opts PruneOptions) ([]byte, *PruneResult, error) {
	minBytes := opts.MinBytes
	if minBytes <= 0 {
		minBytes = DefaultPruneMinBytes
	}
	s := prunePool.Get().(*pruneScratch)
	defer prunePool.Put(s)
	res := &PruneResult{BytesBefore: len(body), BytesAfter: len(body)}
	format, detection, why, err := s.scan(body, opts.Format)
	if err != nil {
		return body, nil, err
	}
	res.Format, res.Detection = format, detection
	var outs []toolOutput
	switch format {
	case FormatMessages:
		outs = s.outs
	case FormatResponses:
		outs = s.inputOuts
	case FormatOpenAIChat:
		outs = s.chatOuts
	default:
		res.Reason = unsupportedReason(why)
		return body, res, nil
	}
	name := idName(format)
	s.dedupe(body, outs, minBytes, name, res)
	if len(s.repl) == 0 {
		return body, res, nil
	}
	out := make([]byte, 0, len(body))
	last := 0
	for _, r := range s.repl {
		f := &s.firsts[r.first]
		out = append(out, body[last:r.start]...)
		out = appendReference(out, body, f, name)
		last = r.end
		res.References = append(res.References, PruneReference{Location: r.loc, First: f.loc, Bytes: r.end - r.start})
	}
	out = append(out, body[last:]...)
	res.Pruned = len(s.repl)
	res.BytesAfter = len(out)
	res.BytesSaved = len(body) - len(out)
	res.EstimatedTokensSaved = res.BytesSaved / BytesPerToken
	return out, res, nil
}

// scan walks a body once: it validates it, collects each API's tool outputs and the marks
// that tell the two "messages" APIs apart, and decides the body's format (given, when set).
func (s *pruneScratch) scan(body []byte, given Format) (Format, Detection, string, error) {
	clear(s.seen)
	s.firsts, s.repl, s.nested = s.firsts[:0], s.repl[:0], s.nested[:0]
	s.outs, s.chatOuts, s.inputOuts = s.outs[:0], s.chatOuts[:0], s.inputOuts[:0]
	var marks shape
	top, err := readTop(body, func(k topKey, o *jsonscan.Object) error {
		var end int
		var err error
		switch {
		case k == keyMessages && body[o.Value()] == '[':
			end, err = s.messages(body, o.Value(), o.Depth(), &marks)
		case k == keyInput && body[o.Value()] == '[':
			end, err = s.inputItems(body, o.Value(), o.Depth())
		case k == keyTools && given == "" && body[o.Value()] == '[':
			// Only detection reads the tools (for their marks); a given format skips them.
			end, err = s.toolMarks(body, o.Value(), o.Depth(), &marks)
		default:
			return nil
		}
		if err != nil {
			return syntaxError(err)
		}
		o.Consumed(end)
		return nil
	})
	if err != nil {
		return "", "", "", err
	}
	marks.anthropic = marks.anthropic || top.shape.anthropic
	marks.chat = marks.chat || top.shape.chat
	f, d, why := resolveFormat(&top, marks, given)
	return f, d, why, nil
}

// detectFormat decides a body's format as Prune does (given, when set, is checked against
// the body's shape). Errors are ErrInvalidJSON.
func detectFormat(body []byte, given Format) (Format, Detection, string, error) {
	if given != "" { // only the top level needs checking
		top, err := readTop(body, nil)
		if err != nil {
			return "", "", "", err
		}
		f, d, why := resolveFormat(&top, shape{}, given)
		return f, d, why, nil
	}
	s := prunePool.Get().(*pruneScratch)
	defer prunePool.Put(s)
	return s.scan(body, given)
}

// dedupe decides, in body order, which outputs repeat an earlier one; it fills s.firsts and
// s.repl and counts the outputs seen.
func (s *pruneScratch) dedupe(body []byte, outs []toolOutput, minBytes int, idName string, res *PruneResult) {
	res.ToolResults = len(outs)
	for k := range outs {
		t := &outs[k]
		if t.keep || t.end == 0 || t.end-t.start < minBytes {
			continue
		}
		content := body[t.start:t.end]
		h := maphash.Bytes(pruneSeed, content)
		if n, ok := s.seen[h]; ok {
			f := &s.firsts[n]
			if bytes.Equal(body[f.start:f.end], content) && f.referenceLen < len(content) {
				s.repl = append(s.repl, replacement{start: t.start, end: t.end, first: n, loc: t.loc})
			}
			continue
		}
		f := firstResult{loc: t.loc, start: t.start, end: t.end}
		if t.idEnd != 0 && !t.idEscaped && safeID(body[t.idStart:t.idEnd]) {
			f.idStart, f.idEnd = t.idStart, t.idEnd
		}
		f.referenceLen = referenceLen(body, &f, idName)
		s.seen[h] = len(s.firsts)
		s.firsts = append(s.firsts, f)
	}
}

// appendReference writes the JSON string that replaces a repeated content.
func appendReference(dst, body []byte, f *firstResult, idName string) []byte {
	dst = append(dst, `"[agent-rewind: identical to the earlier tool result at `...)
	dst = f.loc.appendPath(dst)
	if f.idEnd != 0 {
		dst = append(dst, " ("...)
		dst = append(dst, idName...)
		dst = append(dst, ' ')
		dst = append(dst, body[f.idStart+1:f.idEnd-1]...)
		dst = append(dst, ')')
	}
	return append(dst, `; its content is omitted here to save tokens]"`...)
}

// referenceLen is the length of appendReference's output.
func referenceLen(body []byte, f *firstResult, idName string) int {
	var buf [256]byte
	return len(appendReference(buf[:0], body, f, idName))
}

// safeID reports whether a raw call id token can be quoted inside the reference: short,
// unescaped, and made of the characters the providers' ids use.
func safeID(tok []byte) bool {
	if len(tok) < 3 || len(tok) > 66 {
		return false
	}
	for _, c := range tok[1 : len(tok)-1] {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// messages walks a "messages" array, which may be Anthropic's or Chat Completions': it
// collects both APIs' tool outputs (tool_result blocks into s.outs, tool messages into
// s.chatOuts) and the marks that tell the two apart.
func (s *pruneScratch) messages(body []byte, i, depth int, marks *shape) (int, error) {
	a, err := jsonscan.OpenArray(body, i, depth)
	if err != nil {
		return i, err
	}
	for a.Next() {
		mi := a.Index()
		if body[a.Value()] != '{' {
			continue
		}
		m, err := jsonscan.OpenObject(body, a.Value(), a.Depth())
		if err != nil {
			return i, err
		}
		chat := toolOutput{loc: Location{Section: SectionChat, Index: mi, Block: -1, Sub: -1, Field: "content"}}
		var isTool, seenRole, seenContent, seenID bool
		for m.Next() {
			v := m.Value()
			switch {
			case m.KeyIs("role"):
				chat.keep = chat.keep || seenRole
				seenRole = true
				if body[v] == '"' {
					end, esc, err := jsonscan.ScanString(body, v)
					if err != nil {
						return i, err
					}
					m.Consumed(end)
					marks.role(body[v:end], esc)
					isTool = jsonscan.StringIs(body[v:end], esc, "tool")
				}
			case m.KeyIs("tool_call_id"):
				marks.chat = true
				chat.keep = chat.keep || seenID
				seenID = true
				if body[v] == '"' {
					end, esc, err := jsonscan.ScanString(body, v)
					if err != nil {
						return i, err
					}
					m.Consumed(end)
					chat.idStart, chat.idEnd, chat.idEscaped = v, end, esc
				}
			case m.KeyIs("content"):
				chat.keep = chat.keep || seenContent
				seenContent = true
				var end int
				var err error
				if body[v] == '[' {
					var marker bool
					end, marker, err = s.content(body, mi, v, m.Depth(), marks)
					chat.keep = chat.keep || marker
				} else {
					end, err = jsonscan.SkipValue(body, v, m.Depth())
				}
				if err != nil {
					return i, err
				}
				chat.start, chat.end = v, end
				m.Consumed(end)
			default:
				marks.messageKey(&m)
			}
		}
		if err := m.Err(); err != nil {
			return i, err
		}
		a.Consumed(m.End())
		if isTool {
			s.chatOuts = append(s.chatOuts, chat)
		}
	}
	return a.End(), a.Err()
}

// content walks one message's content array: its tool_result blocks become Anthropic tool
// outputs. marker reports whether a block carries a cache marker (a Chat tool message's
// content with one is never pruned).
func (s *pruneScratch) content(body []byte, mi, v, depth int, marks *shape) (end int, marker bool, err error) {
	a, err := jsonscan.OpenArray(body, v, depth)
	if err != nil {
		return v, false, err
	}
	for a.Next() {
		if body[a.Value()] != '{' {
			continue
		}
		b, err := readBlock(body, a.Value(), a.Depth(), s.nested)
		if err != nil {
			return v, false, err
		}
		s.nested = b.nested[:0]
		a.Consumed(b.end)
		marks.anthropic = marks.anthropic || b.marks.anthropic
		marks.chat = marks.chat || b.marks.chat
		marker = marker || b.cc.present || b.breakpoint
		if b.kind != kindToolResult {
			continue
		}
		t := toolOutput{
			loc:   Location{Section: SectionMessages, Index: mi, Block: a.Index(), Sub: -1},
			start: b.contentStart, end: b.contentEnd,
			idStart: b.idStart, idEnd: b.idEnd, idEscaped: b.idEscaped,
			keep: b.dup || len(b.nested) > 0,
		}
		s.outs = append(s.outs, t)
	}
	return a.End(), marker, a.Err()
}

// toolMarks reads the marks of a tools array (Anthropic's input_schema, Chat's function).
func (s *pruneScratch) toolMarks(body []byte, v, depth int, marks *shape) (int, error) {
	a, err := jsonscan.OpenArray(body, v, depth)
	if err != nil {
		return v, err
	}
	for a.Next() {
		if body[a.Value()] != '{' {
			continue
		}
		b, err := readBlock(body, a.Value(), a.Depth(), s.nested)
		if err != nil {
			return v, err
		}
		s.nested = b.nested[:0]
		a.Consumed(b.end)
		marks.anthropic = marks.anthropic || b.marks.anthropic
		marks.chat = marks.chat || b.marks.chat
	}
	return a.End(), a.Err()
}
