package gateway

import (
	"bytes"
	"net/http"

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
		var buf [32]byte
		for o.Next() {
			key := o.Key()
			if o.KeyEscaped() {
				key = jsonscan.AppendUnquoted(buf[:0], key)
			} else {
				key = key[1 : len(key)-1]
			}
			var dst *[]byte
			switch string(key) {
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
