package gateway

import (
	"bytes"
	"net/http"
	"slices"

	"github.com/agent-rewind/rewind/cacheplan"
	"github.com/agent-rewind/rewind/internal/jsonscan"
)

// API is a model API whose calls the gateway understands: records, replays, prunes and
// prices. Its values are the cacheplan format names, so one word means one API everywhere.
type API string

// The understood APIs. Every other request passes through unchanged.
const (
	APIMessages  API = API(cacheplan.FormatMessages)   // Anthropic Messages: POST /v1/messages
	APIResponses API = API(cacheplan.FormatResponses)  // OpenAI Responses: POST /v1/responses
	APIChat      API = API(cacheplan.FormatOpenAIChat) // OpenAI Chat Completions: POST /v1/chat/completions
)

// APIs lists the understood APIs in the order the banner and --json name them.
var APIs = []API{APIMessages, APIResponses, APIChat}

// apiPaths maps each understood API to the one path it is called on.
var apiPaths = map[string]API{
	"/v1/messages":         APIMessages,
	"/v1/responses":        APIResponses,
	"/v1/chat/completions": APIChat,
}

// Path is the path the API is called on (always POST).
func (a API) Path() string {
	for p, api := range apiPaths {
		if api == a {
			return p
		}
	}
	return ""
}

// apiOf returns the API r calls, or "" for a request that passes through: only a POST to an
// API's own path is understood (GET /v1/responses/{id}, a background response's polling,
// and POST /v1/responses/{id}/cancel pass through).
func apiOf(r *http.Request) API {
	if r.Method != http.MethodPost {
		return ""
	}
	return apiPaths[r.URL.Path]
}

// Why a call is never answered by exact replay (memory or the team store): each answer
// depends on, or changes, state the request body does not hold. X-Rewind-Bypass names it.
const (
	bypassPreviousResponse = "previous_response_id" // continues a response stored upstream
	bypassConversation     = "conversation"         // reads and appends to a stored conversation
	bypassBackground       = "background"           // queued upstream; the answer comes by polling
	bypassStore            = "store"                // stores a response or completion upstream
)

// HeaderBypass names why a call of an understood API was forwarded without replay.
const HeaderBypass = "X-Rewind-Bypass"

// bypassReason returns why a call of api with this body must not be replayed, or "" when it
// may be. Anthropic Messages calls hold all their state in the body. A Responses call is
// replayed only when it says "store": false (the API stores a response unless told not to,
// and a replay would not store it again) and has no previous_response_id, conversation or
// background: true. A Chat Completions call is replayed unless it says "store": true (its
// default is false). Only the top level is read, with encoding/json's rules for what a
// member is (escapes decoded, the last of repeated members winning); a body that is not a
// JSON object is left to the upstream to refuse (an error is never recorded), except that a
// Responses call must show store false.
func bypassReason(api API, body []byte) string {
	if api == APIMessages {
		return ""
	}
	var prev, conv, store, background []byte
	o, err := jsonscan.OpenObject(body, jsonscan.SkipSpace(body, 0), 0)
	if err == nil {
		for o.Next() {
			key, _ := memberKey(body, &o)
			var dst *[]byte
			switch key {
			case "previous_response_id":
				dst = &prev
			case "conversation":
				dst = &conv
			case "store":
				dst = &store
			case "background":
				dst = &background
			default:
				continue
			}
			end, err := jsonscan.SkipValue(body, o.Value(), o.Depth())
			if err != nil {
				o.Fail(err)
				break
			}
			o.Consumed(end)
			*dst = body[o.Value():end]
		}
		if o.Err() != nil {
			err = o.Err()
		}
	}
	given := func(v []byte) bool { return v != nil && !bytes.Equal(v, []byte("null")) }
	switch api {
	case APIResponses:
		switch {
		case err != nil:
			return bypassStore // not an object: it cannot say "store": false
		case given(prev):
			return bypassPreviousResponse
		case given(conv):
			return bypassConversation
		case bytes.Equal(background, []byte("true")):
			return bypassBackground
		case !bytes.Equal(store, []byte("false")):
			return bypassStore
		}
	case APIChat:
		if err == nil && bytes.Equal(store, []byte("true")) {
			return bypassStore
		}
	}
	return ""
}

// keyIgnored are the top-level members of an OpenAI request body that the replay key leaves
// out: they route or label a call and do not change its answer, and clients set them afresh
// for every session, so keeping them would make every session's calls distinct.
// prompt_cache_key picks the upstream's prompt-cache shard; client_metadata is Codex CLI's
// per-turn telemetry (thread, session and turn ids, the turn's start time). metadata, user
// and safety_identifier stay in the key: callers use them to tell their own users apart.
// The "id" of a Responses input item of type "message" is left out too: a label the client
// gives the message (Codex CLI a fresh one per session), never read by the model. Every
// other id stays, call_id above all: an answer may name the calls it follows.
var keyIgnored = []string{"prompt_cache_key", "client_metadata"}

// keyBody returns the body the replay key hashes for a call of api: for the OpenAI APIs, the
// body without the keyIgnored members and, for Responses, without the ids of its input
// message items; otherwise, or when the body is not a JSON object or has none of them, the
// body itself.
func keyBody(api API, body []byte) []byte {
	if api == APIMessages {
		return body
	}
	o, err := jsonscan.OpenObject(body, jsonscan.SkipSpace(body, 0), 0)
	if err != nil {
		return body
	}
	var drop [][2]int // member spans, each from its key's opening quote to the end of its value
	for o.Next() {
		key, keyStart := memberKey(body, &o)
		if api == APIResponses && key == "input" {
			end, ok := messageIDs(body, o.Value(), o.Depth(), &drop)
			if !ok {
				return body
			}
			o.Consumed(end)
			continue
		}
		if !slices.Contains(keyIgnored, key) {
			continue
		}
		end, err := jsonscan.SkipValue(body, o.Value(), o.Depth())
		if err != nil {
			return body
		}
		o.Consumed(end)
		drop = append(drop, [2]int{keyStart, end})
	}
	if o.Err() != nil || len(drop) == 0 {
		return body
	}
	// Rebuild without the dropped members; a dropped member's separating comma goes with it.
	out := make([]byte, 0, len(body))
	prev := 0
	for _, d := range drop {
		seg := bytes.TrimRight(body[prev:d[0]], " \t\r\n")
		out = append(out, seg...)
		prev = d[1]
		rest := jsonscan.SkipSpace(body, prev)
		if rest < len(body) && body[rest] == ',' {
			prev = rest + 1 // drop the comma after it
		} else if n := len(out); n > 0 && out[n-1] == ',' {
			out = out[:n-1] // the last member: drop the comma before it
		}
	}
	return append(out, body[prev:]...)
}

// memberKey returns the current member's decoded key and the offset of its opening quote
// (Key is a slice of body, so its offset is the difference of the capacities).
func memberKey(body []byte, o *jsonscan.Object) (string, int) {
	key := o.Key()
	start := cap(body) - cap(key)
	if o.KeyEscaped() {
		var buf [32]byte
		return string(jsonscan.AppendUnquoted(buf[:0], key)), start
	}
	return string(key[1 : len(key)-1]), start
}

// messageIDs walks a Responses input value at body[i] and adds to drop the span of the "id"
// member of every item whose type is "message"; it returns the offset after the value (ok
// false: it does not parse). A string input has no items.
func messageIDs(body []byte, i, depth int, drop *[][2]int) (int, bool) {
	if i >= len(body) || body[i] != '[' {
		end, err := jsonscan.SkipValue(body, i, depth)
		return end, err == nil
	}
	a, err := jsonscan.OpenArray(body, i, depth)
	if err != nil {
		return 0, false
	}
	for a.Next() {
		v := a.Value()
		if body[v] != '{' {
			continue
		}
		item, err := jsonscan.OpenObject(body, v, a.Depth())
		if err != nil {
			return 0, false
		}
		var typ []byte
		id := [2]int{-1, -1}
		for item.Next() {
			key, keyStart := memberKey(body, &item)
			if key != "type" && key != "id" {
				continue
			}
			end, err := jsonscan.SkipValue(body, item.Value(), item.Depth())
			if err != nil {
				return 0, false
			}
			item.Consumed(end)
			if key == "type" {
				typ = body[item.Value():end]
			} else {
				id = [2]int{keyStart, end}
			}
		}
		if item.Err() != nil {
			return 0, false
		}
		a.Consumed(item.End())
		if id[0] >= 0 && bytes.Equal(typ, []byte(`"message"`)) {
			*drop = append(*drop, id)
		}
	}
	if a.Err() != nil {
		return 0, false
	}
	return a.End(), true
}
