// Package mockanthropic is a local stand-in for the Anthropic Messages API: an HTTP server on
// 127.0.0.1 that answers POST /v1/messages with recorded responses, as JSON or as a server-sent
// event stream, so that the gateway's tests and benchmarks run without a network or a key.
//
// # Recordings
//
// A recording pairs a request body with the response Message (the JSON object the real API
// returns for a non-streaming call: id, type, role, model, content, stop_reason, stop_sequence,
// usage). Requests are matched by RequestKey: the SHA-256 of the body's canonical JSON (object
// keys sorted, insignificant whitespace dropped) with the "stream" member removed, so one
// recording answers both the streaming and the non-streaming form of a call. A request with no
// recording gets Options.Fallback's answer (by default a short synthesized reply).
// LoadDir reads recordings from NN.request.json / NN.response.json file pairs.
//
// # Wire format
//
// Non-streaming: 200, Content-Type application/json, the recorded Message bytes.
//
// Streaming ("stream": true): 200, Content-Type text/event-stream; charset=utf-8, and the event
// sequence of the real API, each event as "event: NAME\ndata: JSON\n\n", flushed one by one:
//
//	message_start        the Message with empty content, null stop_reason, output_tokens 1
//	content_block_start  per block: text with "" or tool_use with input {}
//	ping                 once, after the first content_block_start
//	content_block_delta  text_delta chunks, or input_json_delta chunks of the tool input's JSON
//	content_block_stop
//	message_delta        stop_reason, stop_sequence, and the final cumulative usage
//	message_stop
//
// SSE renders a Message as exactly these bytes, so a test can check that a replayed stream is
// byte-identical to what the upstream sent.
//
// Errors use the API's shape, {"type":"error","error":{"type":...,"message":...}}: 401 without
// an x-api-key or Authorization header, 400 for a body that is not a JSON object, 405 for a
// method other than POST, 404 for any other path.
//
// It also serves OpenAI's Responses (POST /v1/responses) and Chat Completions (POST
// /v1/chat/completions) APIs with synthesized answers, JSON or streamed, and their usage as
// OpenAI's automatic prompt caching reports it (see openai.go), and counts calls by path
// (PathHits).
//
// It is a module of its own, with no dependencies, so that the gateway and the cli can test
// against it without requiring the tools module (the benchmarks): a consumer of the gateway
// library never downloads this code.
package mockanthropic
