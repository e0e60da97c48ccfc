// Package analyze is bounded, offline analysis of captured model-provider traffic: how many
// requests in a capture were exact repeats that a record/replay gateway could have answered
// without a model call, and how many tokens those repeats used. It reads Anthropic Messages
// (POST /v1/messages), OpenAI Responses (POST /v1/responses) and OpenAI Chat Completions
// (POST /v1/chat/completions) requests; the path names the API. It never sends a request and
// never needs a workspace.
//
// # Capture format
//
// NDJSON (one record per line) or a JSON array of records, or one record. A record is a JSON
// object:
//
//	{"method":"POST","origin":"https://api.anthropic.com","path":"/v1/messages",
//	 "headers":{"anthropic-version":"2023-06-01","content-type":"application/json"},
//	 "body":{"model":"claude-sonnet-4-5","max_tokens":1024,"messages":[...]},
//	 "usage":{"input_tokens":1200,"output_tokens":80,"cache_creation_input_tokens":0,"cache_read_input_tokens":0},
//	 "scope":"team-a","status":200}
//	{"method":"POST","origin":"https://api.openai.com","path":"/v1/responses",
//	 "headers":{"content-type":"application/json","openai-project":"proj_1"},
//	 "body":{"model":"gpt-5.5","input":[...],"store":false},
//	 "usage":{"input_tokens":1200,"input_tokens_details":{"cached_tokens":1024},"output_tokens":80,"output_tokens_details":{"reasoning_tokens":32}}}
//
// method, origin and path are required. headers is a subset: anthropic-version,
// anthropic-beta, openai-beta, openai-organization and openai-project (which are part of the
// request key), content-type, accept, accept-encoding, content-length and user-agent
// (ignored); any other header makes the record ineligible, and credentials (authorization,
// x-api-key, cookie, proxy-authorization) must never be captured. body is the request body,
// or bodySha256 the SHA-256 of its canonical form (member order and whitespace ignored); a
// Responses request needs its body, and one that continues or creates state the provider
// keeps (previous_response_id, conversation, background) is never a repeat opportunity. usage
// holds the response's token counts by its API's names (OpenAI's input counts include their
// cached tokens, which the report moves to cache reads): whole numbers from 0 to 100,000,000;
// anything else fails the analysis. scope is an optional subordinate scope label; status the
// optional response status. FORMAT.md is the full specification: the eligibility rules, the
// request key, the canonical form, the limits and the report shapes.
//
// # Limits
//
// NDJSON is processed as a stream, one record in memory at a time: at most 2 MiB per record,
// 128 MiB in all, 100,000 distinct request keys and 1,000 scopes; a JSON array is read whole,
// at most 16 MiB. Crossing a limit returns a *LimitError with the byte counts and SHA-256
// digests, never an excerpt of the input or a file path; so does every other error.
//
// # Report
//
// The default Report is attested: aggregate counters, in all and per API, and the source's
// byte count and SHA-256, no prompt samples and no scope labels. Its numbers are hypothetical repeat
// opportunities, not realised savings (Statement). Options.Legacy adds a per-scope breakdown
// and a redacted sample (the most repeated request reduced to its top-level member names,
// types and sizes), flagged for review before sharing.
//
// The parser reads only the members it needs and canonicalises the body in the same pass
// that validates it (internal/jsonscan, fuzzed against encoding/json); there is no reflection
// over records.
package analyze
