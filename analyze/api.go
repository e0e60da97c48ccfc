package analyze

import (
	"github.com/agent-rewind/rewind/internal/jsonscan"
)

// API is a provider API whose requests analyze counts, named as cacheplan names them.
type API string

// The APIs, each one request path (an optional query after it).
const (
	APIMessages  API = "anthropic-messages" // POST /v1/messages
	APIResponses API = "openai-responses"   // POST /v1/responses
	APIChat      API = "openai-chat"        // POST /v1/chat/completions
)

// apiPaths maps each API to its request path.
var apiPaths = [...]struct {
	api  API
	path string
}{{APIMessages, "/v1/messages"}, {APIResponses, "/v1/responses"}, {APIChat, "/v1/chat/completions"}}

// apiOfPath returns the API whose path p is (before any query), or "" for another path.
func apiOfPath(p []byte) (API, string) {
	for _, a := range apiPaths {
		if string(p) == a.path || (len(p) > len(a.path) && string(p[:len(a.path)]) == a.path && p[len(a.path)] == '?') {
			return a.api, a.path
		}
	}
	return "", ""
}

// holdsProviderState reports whether a Responses body continues or creates state the
// provider keeps: a previous_response_id or conversation (the prompt then starts with what
// the provider stored, which a repeat of the body does not show), or background: true (the
// answer is fetched later by polling). A replay gateway does not answer these, so they are
// no repeat opportunities. body is the offset of a validated value.
func holdsProviderState(data []byte, body, depth int) bool {
	if data[body] != '{' {
		return false
	}
	o, err := jsonscan.OpenObject(data, body, depth)
	if err != nil {
		return false
	}
	state := false
	for o.Next() {
		v := o.Value()
		switch {
		case o.KeyIs("previous_response_id"), o.KeyIs("conversation"):
			state = state || data[v] != 'n'
		case o.KeyIs("background"):
			state = state || data[v] == 't'
		}
	}
	return state
}

// tokensOf reads a record's usage by its API's names: Anthropic's input_tokens (uncached),
// cache_creation_input_tokens and cache_read_input_tokens; the Responses API's input_tokens
// and Chat Completions' prompt_tokens, which include the cached tokens their *_details give,
// so input is what is left; output_tokens or completion_tokens, of which reasoning_tokens.
// ok is false when an API's cached tokens exceed its input: such a usage is not believable.
func tokensOf(api API, u *usage) (t usage, ok bool) {
	switch api {
	case APIResponses:
		return openAITokens(u.input, u.output, u.inputCached, u.outputReasoning)
	case APIChat:
		return openAITokens(u.prompt, u.completion, u.promptCached, u.completionReasoning)
	}
	return usage{input: u.input, output: u.output, cacheCreation: u.cacheCreation, cacheRead: u.cacheRead}, true
}

func openAITokens(input, output, cached, reasoning int64) (usage, bool) {
	if cached > input || reasoning > output {
		return usage{}, false
	}
	return usage{input: input - cached, output: output, cacheRead: cached, reasoning: reasoning}, true
}
