package cacheplan

import "github.com/agent-rewind/rewind/internal/jsonscan"

// topLevel is the position of the members of a request body's top-level object that this
// package reads. A start of 0 means absent (offset 0 is the object's own brace).
type topLevel struct {
	tools, toolsEnd       int
	system, systemEnd     int
	messages, messagesEnd int
	model, modelEnd       int // the raw string token
	modelEscaped          bool
	cc                    marker // top-level (automatic) cache_control
	inputAt, inputEnd     int    // the Responses "input" value
	instructions          int    // the Responses "instructions" value, and its end
	instructionsEnd       int
	messagesArray         bool // messages is an array
	dup                   bool // a member read here appears twice
	isObject              bool
	shape                 shape // the top-level members' API marks
	end                   int   // offset just past the top-level value
}

// readTop validates the whole body and records where its top-level members are. visit, if
// not nil, is called for every member before readTop skips its value, so that a walker can
// read (and consume) the values it cares about in the same pass.
func readTop(data []byte, visit func(key topKey, o *jsonscan.Object) error) (topLevel, error) {
	var t topLevel
	i := jsonscan.SkipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		if err := jsonscan.CheckDocument(data); err != nil {
			return t, syntaxError(err)
		}
		return t, nil
	}
	t.isObject = true
	o, err := jsonscan.OpenObject(data, i, 0)
	if err != nil {
		return t, syntaxError(err)
	}
	for o.Next() {
		k := keyOf(&o)
		v := o.Value()
		switch k {
		case keyTools:
			t.dup = t.dup || t.tools != 0
			t.tools = v
		case keySystem:
			t.dup = t.dup || t.system != 0
			t.system = v
			t.shape.anthropic = true
		case keyMessages:
			t.dup = t.dup || t.messages != 0
			t.messages = v
			t.messagesArray = data[v] == '['
		case keyInput:
			t.dup = t.dup || t.inputAt != 0
			t.inputAt = v
		case keyInstructions:
			t.dup = t.dup || t.instructions != 0
			t.instructions = v
		case keyOther:
			t.shape.topKey(data, &o)
		case keyModel:
			t.dup = t.dup || t.model != 0
			if data[v] == '"' {
				end, esc, err := jsonscan.ScanString(data, v)
				if err != nil {
					return t, syntaxError(err)
				}
				o.Consumed(end)
				t.model, t.modelEnd, t.modelEscaped = v, end, esc
			}
		case keyCacheControl:
			t.dup = t.dup || t.cc.present || t.cc.null
			m, end, err := readMarker(data, v, o.Depth())
			if err != nil {
				return t, syntaxError(err)
			}
			o.Consumed(end)
			t.cc = m
			t.shape.anthropic = true
		}
		if visit != nil {
			if err := visit(k, &o); err != nil {
				return t, err
			}
		}
		end := 0
		switch k {
		case keyTools:
			end = t.consumeEnd(&o, data)
			t.toolsEnd = end
		case keySystem:
			end = t.consumeEnd(&o, data)
			t.systemEnd = end
		case keyMessages:
			end = t.consumeEnd(&o, data)
			t.messagesEnd = end
		case keyInput:
			end = t.consumeEnd(&o, data)
			t.inputEnd = end
		case keyInstructions:
			end = t.consumeEnd(&o, data)
			t.instructionsEnd = end
		}
		if end < 0 {
			return t, syntaxError(o.Err())
		}
	}
	if err := o.Err(); err != nil {
		return t, syntaxError(err)
	}
	t.end = o.End()
	if k := jsonscan.SkipSpace(data, t.end); k != len(data) {
		return t, &SyntaxError{Offset: k, What: "unexpected data after the top-level value"}
	}
	return t, nil
}

// consumeEnd makes sure the current value has been validated and returns its end, or -1
// with the error left in o.
func (t *topLevel) consumeEnd(o *jsonscan.Object, data []byte) int {
	if end, ok := o.ConsumedEnd(); ok {
		return end
	}
	end, err := jsonscan.SkipValue(data, o.Value(), o.Depth())
	if err != nil {
		o.Fail(err)
		return -1
	}
	o.Consumed(end)
	return end
}

type topKey uint8

const (
	keyOther topKey = iota
	keyTools
	keySystem
	keyMessages
	keyModel
	keyCacheControl
	keyInput
	keyInstructions
)

func keyOf(o *jsonscan.Object) topKey {
	switch {
	case o.KeyIs("messages"):
		return keyMessages
	case o.KeyIs("tools"):
		return keyTools
	case o.KeyIs("system"):
		return keySystem
	case o.KeyIs("model"):
		return keyModel
	case o.KeyIs("cache_control"):
		return keyCacheControl
	case o.KeyIs("input"):
		return keyInput
	case o.KeyIs("instructions"):
		return keyInstructions
	}
	return keyOther
}
