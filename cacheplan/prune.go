package cacheplan

import (
	"bytes"
	"hash/maphash"
	"sync"

	"github.com/agent-rewind/rewind/internal/jsonscan"
)

// DefaultPruneMinBytes is the smallest tool_result content the pruner replaces when
// PruneOptions.MinBytes is 0: below it a reference saves too little to be worth changing
// what the model sees.
const DefaultPruneMinBytes = 256

// PruneOptions tune the pruner.
type PruneOptions struct {
	// MinBytes is the smallest content, in JSON bytes, that is replaced by a reference
	// (DefaultPruneMinBytes when 0). A reference is never longer than what it replaces.
	MinBytes int
}

// PruneResult says what the pruner did, without any body text.
type PruneResult struct {
	Format Format `json:"format"`
	// Reason explains a pass-through (a body in another format); empty otherwise.
	Reason      string `json:"reason,omitempty"`
	ToolResults int    `json:"toolResults"` // tool_result blocks seen
	Pruned      int    `json:"pruned"`      // of which replaced by a reference
	BytesBefore int    `json:"bytesBefore"`
	BytesAfter  int    `json:"bytesAfter"`
	BytesSaved  int    `json:"bytesSaved"`
	// EstimatedTokensSaved is BytesSaved / 4: an estimate, and fewer tokens sent is not
	// necessarily a smaller bill once prompt caching is counted.
	EstimatedTokensSaved int              `json:"estimatedTokensSaved"`
	References           []PruneReference `json:"references"`
}

// PruneReference is one replaced tool_result content.
type PruneReference struct {
	Location Location `json:"location"` // the tool_result whose content was replaced
	First    Location `json:"first"`    // the earlier tool_result with the full, identical content
	Bytes    int      `json:"bytes"`    // size of the replaced content
}

type replacement struct {
	start, end int // the content value's bytes
	first      int // index into firsts
	msg, block int // where the replaced tool_result is
}

type firstResult struct {
	loc          Location
	start, end   int // content bytes
	idStart      int // raw tool_use_id token, idEnd == 0 when unusable
	idEnd        int
	referenceLen int
}

type pruneScratch struct {
	seen   map[uint64]int
	firsts []firstResult
	repl   []replacement
	nested []nestedMarker
}

var (
	pruneSeed = maphash.MakeSeed()
	prunePool = sync.Pool{New: func() any { return &pruneScratch{seen: map[uint64]int{}} }}
)

// Prune collapses repeated identical Anthropic tool_result contents: every tool_result whose
// content is byte-for-byte the content of an earlier one is given a short reference to that
// first full one instead. Only those content values change; every other byte of the body is
// kept. A body in another format comes back unchanged, with Format and Reason saying so.
// The only error is ErrInvalidJSON, with body returned unchanged.
//
// The decision for a block depends only on the blocks before it, so pruning an agent loop's
// growing conversation gives every request the same pruned prefix as the one before: pruning
// does not break prompt caching by itself. A tool_result whose content carries a
// cache_control marker is never pruned.
func Prune(body []byte, opts PruneOptions) ([]byte, *PruneResult, error) {
	minBytes := opts.MinBytes
	if minBytes <= 0 {
		minBytes = DefaultPruneMinBytes
	}
	s := prunePool.Get().(*pruneScratch)
	defer prunePool.Put(s)
	clear(s.seen)
	s.firsts, s.repl, s.nested = s.firsts[:0], s.repl[:0], s.nested[:0]
	res := &PruneResult{BytesBefore: len(body), BytesAfter: len(body)}
	openAI := false

	top, err := readTop(body, func(k topKey, o *jsonscan.Object) error {
		if k != keyMessages || body[o.Value()] != '[' {
			return nil
		}
		end, oa, err := pruneMessages(body, o.Value(), o.Depth(), minBytes, s, res)
		if err != nil {
			return syntaxError(err)
		}
		openAI = oa
		o.Consumed(end)
		return nil
	})
	if err != nil {
		return body, nil, err
	}
	res.Format = top.format(body, openAI)
	if res.Format != FormatMessages {
		res.Reason = "not an Anthropic Messages request body (" + string(res.Format) + "); passed through unchanged"
		res.ToolResults, res.Pruned = 0, 0
		return body, res, nil
	}
	if len(s.repl) == 0 {
		return body, res, nil
	}
	out := make([]byte, 0, len(body))
	last := 0
	for _, r := range s.repl {
		f := &s.firsts[r.first]
		out = append(out, body[last:r.start]...)
		out = appendReference(out, body, f)
		last = r.end
		res.References = append(res.References, PruneReference{
			Location: Location{Section: SectionMessages, Index: r.msg, Block: r.block, Sub: -1},
			First:    f.loc,
			Bytes:    r.end - r.start,
		})
	}
	out = append(out, body[last:]...)
	res.Pruned = len(s.repl)
	res.BytesAfter = len(out)
	res.BytesSaved = len(body) - len(out)
	res.EstimatedTokensSaved = res.BytesSaved / BytesPerToken
	return out, res, nil
}

// appendReference writes the JSON string that replaces a repeated content.
func appendReference(dst, body []byte, f *firstResult) []byte {
	dst = append(dst, `"[agent-rewind: identical to the earlier tool result at `...)
	dst = f.loc.appendPath(dst)
	if f.idEnd != 0 {
		dst = append(dst, " (tool_use_id "...)
		dst = append(dst, body[f.idStart+1:f.idEnd-1]...)
		dst = append(dst, ')')
	}
	return append(dst, `; its content is omitted here to save tokens]"`...)
}

// referenceLen is the length of appendReference's output.
func referenceLen(body []byte, f *firstResult) int {
	var buf [256]byte
	return len(appendReference(buf[:0], body, f))
}

// safeID reports whether a raw tool_use_id token can be quoted inside the reference: short,
// unescaped, and made of the characters the provider's ids use.
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

func pruneMessages(body []byte, i, depth, minBytes int, s *pruneScratch, res *PruneResult) (end int, openAI bool, err error) {
	a, err := jsonscan.OpenArray(body, i, depth)
	if err != nil {
		return i, false, err
	}
	for a.Next() {
		mi := a.Index()
		if body[a.Value()] != '{' {
			continue
		}
		m, err := jsonscan.OpenObject(body, a.Value(), a.Depth())
		if err != nil {
			return i, false, err
		}
		for m.Next() {
			v := m.Value()
			switch {
			case m.KeyIs("role"):
				if body[v] == '"' {
					end, esc, err := jsonscan.ScanString(body, v)
					if err != nil {
						return i, false, err
					}
					m.Consumed(end)
					openAI = openAI || openAIRole(body[v:end], esc)
				}
			case openAIMessageKey(&m):
				openAI = true
			case m.KeyIs("content") && body[v] == '[':
				end, err := pruneContent(body, mi, v, m.Depth(), minBytes, s, res)
				if err != nil {
					return i, false, err
				}
				m.Consumed(end)
			}
		}
		if err := m.Err(); err != nil {
			return i, false, err
		}
		a.Consumed(m.End())
	}
	return a.End(), openAI, a.Err()
}

func pruneContent(body []byte, mi, v, depth, minBytes int, s *pruneScratch, res *PruneResult) (int, error) {
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
		if b.kind != kindToolResult {
			continue
		}
		res.ToolResults++
		if b.dup || b.contentEnd == 0 || len(b.nested) > 0 || b.contentEnd-b.contentStart < minBytes {
			continue
		}
		loc := Location{Section: SectionMessages, Index: mi, Block: a.Index(), Sub: -1}
		content := body[b.contentStart:b.contentEnd]
		h := maphash.Bytes(pruneSeed, content)
		if k, ok := s.seen[h]; ok {
			f := &s.firsts[k]
			if bytes.Equal(body[f.start:f.end], content) && f.referenceLen < len(content) {
				s.repl = append(s.repl, replacement{start: b.contentStart, end: b.contentEnd, first: k, msg: mi, block: a.Index()})
			}
			continue
		}
		f := firstResult{loc: loc, start: b.contentStart, end: b.contentEnd}
		if b.idEnd != 0 && !b.idEscaped && safeID(body[b.idStart:b.idEnd]) {
			f.idStart, f.idEnd = b.idStart, b.idEnd
		}
		f.referenceLen = referenceLen(body, &f)
		s.seen[h] = len(s.firsts)
		s.firsts = append(s.firsts, f)
	}
	if err := a.Err(); err != nil {
		return v, err
	}
	return a.End(), nil
}
