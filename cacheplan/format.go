package cacheplan

import (
	"fmt"

	"github.com/agent-rewind/rewind/internal/jsonscan"
)

// Format is the API a request body is for, as this package read it.
type Format string

// The formats. The first three are planned, pruned and compared, each by its own API's rules.
const (
	FormatMessages   Format = "anthropic-messages" // Anthropic Messages (POST /v1/messages): a "messages" array
	FormatResponses  Format = "openai-responses"   // OpenAI Responses (POST /v1/responses): "input" and no "messages"
	FormatOpenAIChat Format = "openai-chat"        // OpenAI Chat Completions (POST /v1/chat/completions): a "messages" array
	FormatOther      Format = "other"              // any other JSON value: left alone
)

// Formats lists the supported formats, for help texts and errors.
var Formats = []Format{FormatMessages, FormatResponses, FormatOpenAIChat}

// SupportedShapes names the body shapes this package reads, for errors a person acts on.
const SupportedShapes = `an Anthropic Messages body ("messages", POST /v1/messages), an OpenAI Responses body ("input", POST /v1/responses) or an OpenAI Chat Completions body ("messages", POST /v1/chat/completions)`

// ParseFormat returns the Format a caller named ("anthropic-messages", "openai-responses" or
// "openai-chat"), or an error naming the accepted values.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("unknown API %q: use anthropic-messages, openai-responses or openai-chat", s)
}

// Detection says how a body's Format was decided.
type Detection string

// The ways a Format is decided.
const (
	// DetectedByShape: the body has a member or value only that API has (an "input" member,
	// a "tool" role, a tool_result block, a top-level "system"...).
	DetectedByShape Detection = "shape"
	// DetectionGiven: the caller said which API the body is for (the gateway knows it from
	// the request path; the CLI from --api).
	DetectionGiven Detection = "given"
	// DetectionAssumed: a "messages" body with nothing only one of Anthropic Messages and
	// Chat Completions has (user and assistant turns of plain text): read as Anthropic
	// Messages, this package's first format. A caller that knows better says so.
	DetectionAssumed Detection = "assumed"
)

// shape collects the marks of the two "messages" APIs met while walking a body: members,
// roles and block types that only Anthropic Messages or only Chat Completions accept. A body
// with marks of both is neither.
type shape struct{ anthropic, chat bool }

// chatTopKeys and anthropicTopKeys are top-level members only one of the two APIs defines.
var (
	chatTopKeys = []string{"max_completion_tokens", "response_format", "stream_options", "n", "logprobs", "top_logprobs",
		"logit_bias", "frequency_penalty", "presence_penalty", "seed", "parallel_tool_calls", "prompt_cache_key",
		"prompt_cache_retention", "prompt_cache_options", "reasoning_effort", "modalities", "audio", "prediction",
		"web_search_options", "store", "verbosity", "safety_identifier", "functions", "function_call", "user", "stop"}
	anthropicTopKeys = []string{"system", "thinking", "top_k", "stop_sequences", "cache_control", "mcp_servers",
		"container", "context_management", "anthropic_version", "anthropic_beta"}
)

// topKey marks a top-level member (tool_choice is a string only in Chat Completions, an
// object in both).
func (s *shape) topKey(data []byte, o *jsonscan.Object) {
	for _, k := range chatTopKeys {
		if o.KeyIs(k) {
			s.chat = true
			return
		}
	}
	for _, k := range anthropicTopKeys {
		if o.KeyIs(k) {
			s.anthropic = true
			return
		}
	}
	if o.KeyIs("tool_choice") && data[o.Value()] == '"' {
		s.chat = true
	}
}

// messageKey marks a message member only Chat Completions has.
func (s *shape) messageKey(o *jsonscan.Object) {
	if o.KeyIs("tool_calls") || o.KeyIs("function_call") || o.KeyIs("tool_call_id") || o.KeyIs("refusal") {
		s.chat = true
	}
}

// role marks a message role only Chat Completions has (Anthropic has user and assistant).
func (s *shape) role(tok []byte, esc bool) {
	if jsonscan.StringIs(tok, esc, "tool") || jsonscan.StringIs(tok, esc, "developer") ||
		jsonscan.StringIs(tok, esc, "function") || jsonscan.StringIs(tok, esc, "system") {
		s.chat = true
	}
}

// Content block (and tool) types only one API has; "text" is both.
var (
	chatBlockTypes      = []string{"image_url", "input_audio", "file", "refusal", "function"}
	anthropicBlockTypes = []string{"tool_use", "tool_result", "thinking", "redacted_thinking", "image", "document",
		"search_result", "server_tool_use", "web_search_tool_result", "container_upload", "mcp_tool_use", "mcp_tool_result"}
)

// blockType marks a content block's (or a tool's) "type" string.
func (s *shape) blockType(tok []byte, esc bool) {
	for _, t := range chatBlockTypes {
		if jsonscan.StringIs(tok, esc, t) {
			s.chat = true
			return
		}
	}
	for _, t := range anthropicBlockTypes {
		if jsonscan.StringIs(tok, esc, t) {
			s.anthropic = true
			return
		}
	}
}

// blockKey marks a member of a content block or a tool: "input_schema" and "cache_control"
// are Anthropic's, "prompt_cache_breakpoint" and a tool's "function" are OpenAI's.
func (s *shape) blockKey(o *jsonscan.Object) {
	switch {
	case o.KeyIs("input_schema"), o.KeyIs("cache_control"):
		s.anthropic = true
	case o.KeyIs("function"), o.KeyIs("prompt_cache_breakpoint"):
		s.chat = true
	}
}

// resolveFormat decides the format of a body from its top level and the marks its walker
// met, or checks that the body fits the format a caller gave. reason says why a body is
// FormatOther; it never quotes the body.
func resolveFormat(t *topLevel, s shape, given Format) (Format, Detection, string) {
	if !t.isObject {
		return FormatOther, "", "the body is not a JSON object"
	}
	hasMessages := t.messages != 0 && t.messagesArray
	switch given {
	case FormatMessages, FormatOpenAIChat:
		if !hasMessages {
			return FormatOther, "", fmt.Sprintf("the body has no \"messages\" array, which a %s body needs", given)
		}
		return given, DetectionGiven, ""
	case FormatResponses:
		if t.inputAt == 0 {
			return FormatOther, "", "the body has no \"input\" member, which an openai-responses body needs"
		}
		return given, DetectionGiven, ""
	}
	switch {
	case hasMessages && s.anthropic && s.chat:
		return FormatOther, "", "the body mixes members only Anthropic Messages has with members only Chat Completions has"
	case hasMessages && s.chat:
		return FormatOpenAIChat, DetectedByShape, ""
	case hasMessages && s.anthropic:
		return FormatMessages, DetectedByShape, ""
	case hasMessages:
		return FormatMessages, DetectionAssumed, ""
	case t.messages == 0 && t.inputAt != 0:
		return FormatResponses, DetectedByShape, ""
	case t.messages != 0:
		return FormatOther, "", "\"messages\" is not an array"
	}
	return FormatOther, "", "the body has neither a \"messages\" array nor an \"input\" member"
}

// unsupportedReason is the Reason of a result for a body in no supported format.
func unsupportedReason(why string) string {
	return why + "; supported: " + SupportedShapes
}
