package cacheplan

import "github.com/agent-rewind/rewind/internal/jsonscan"

// outputItemTypes are the Responses input items that carry a tool's output in "output" and
// name their call in "call_id": a function tool's, and a custom (freeform) tool's such as
// Codex's apply_patch.
var outputItemTypes = []string{"function_call_output", "custom_tool_call_output"}

// inputItems walks a Responses "input" array and collects its tool output items into
// s.inputOuts. Other items (messages, function calls, reasoning) are only validated.
func (s *pruneScratch) inputItems(body []byte, i, depth int) (int, error) {
	a, err := jsonscan.OpenArray(body, i, depth)
	if err != nil {
		return i, err
	}
	for a.Next() {
		if body[a.Value()] != '{' {
			continue
		}
		it, err := jsonscan.OpenObject(body, a.Value(), a.Depth())
		if err != nil {
			return i, err
		}
		t := toolOutput{loc: Location{Section: SectionInput, Index: a.Index(), Block: -1, Sub: -1, Field: "output"}}
		var isOutput, seenType, seenID, seenOutput bool
		for it.Next() {
			v := it.Value()
			switch {
			case it.KeyIs("type"):
				t.keep = t.keep || seenType
				seenType = true
				if body[v] != '"' {
					continue
				}
				end, esc, err := jsonscan.ScanString(body, v)
				if err != nil {
					return i, err
				}
				it.Consumed(end)
				for _, name := range outputItemTypes {
					isOutput = isOutput || jsonscan.StringIs(body[v:end], esc, name)
				}
			case it.KeyIs("call_id"):
				t.keep = t.keep || seenID
				seenID = true
				if body[v] != '"' {
					continue
				}
				end, esc, err := jsonscan.ScanString(body, v)
				if err != nil {
					return i, err
				}
				it.Consumed(end)
				t.idStart, t.idEnd, t.idEscaped = v, end, esc
			case it.KeyIs("output"):
				t.keep = t.keep || seenOutput
				seenOutput = true
				var end int
				var marker bool
				if body[v] == '[' {
					end, marker, err = s.outputParts(body, v, it.Depth())
				} else {
					end, err = jsonscan.SkipValue(body, v, it.Depth())
				}
				if err != nil {
					return i, err
				}
				it.Consumed(end)
				t.start, t.end = v, end
				t.keep = t.keep || marker
			}
		}
		if err := it.Err(); err != nil {
			return i, err
		}
		a.Consumed(it.End())
		if isOutput {
			s.inputOuts = append(s.inputOuts, t)
		}
	}
	return a.End(), a.Err()
}

// outputParts walks an output given as content parts (input_text, input_image, input_file)
// and reports whether one carries a prompt_cache_breakpoint: pruning it would move the
// client's cache marker.
func (s *pruneScratch) outputParts(body []byte, v, depth int) (int, bool, error) {
	a, err := jsonscan.OpenArray(body, v, depth)
	if err != nil {
		return v, false, err
	}
	marker := false
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
		marker = marker || b.breakpoint
	}
	return a.End(), marker, a.Err()
}
