// Package cacheplan plans Anthropic prompt-cache breakpoints and reports on OpenAI's automatic
// prefix caching, prunes repeated tool results, and compares consecutive requests' cacheable
// prefixes. It works on raw request bodies (the JSON of a POST /v1/messages, /v1/responses or
// /v1/chat/completions) and never re-encodes them: it finds offsets with a validating
// scanner and splices bytes, so everything it does not mean to change stays byte for byte
// what the client sent. It makes no network call and reads no files.
//
// Three entry points:
//
//   - PlanRequest / Plan.Apply (and Preserve, both at once): if the client supplied no
//     cache_control anywhere, plan a breakpoint at the end of the stable prefix; for an
//     OpenAI body, report what the provider's automatic caching holds.
//   - Prune: replace every tool output (an Anthropic tool_result, an OpenAI
//     function_call_output or tool message) that repeats an earlier one byte for byte with a
//     short reference to that first full one.
//   - Compare: classify a request against the previous one of the same API (unchanged,
//     appended messages or items, appended blocks, divergence) and name the first change.
//
// # The provider's rules (checked 2026-11; provider policy, subject to change)
//
// From Anthropic's prompt-caching documentation
// (https://platform.claude.com/docs/en/build-with-claude/prompt-caching):
//
//   - A request renders as tools, then system, then messages. A cache_control marker on a
//     tool, a system block or a message content block caches the whole prefix up to and
//     including that block; a later request hits only if its prefix is identical up there.
//   - At most 4 markers per request (MaxBreakpoints; see also
//     https://github.com/microsoft/vscode/pull/315505, "exactly Anthropic's per-request limit").
//   - From each marker the provider looks back at most about 20 content blocks for an earlier
//     cache entry (LookbackBlocks). An agent turn that appends more blocks than that misses
//     the previous entry unless a marker sits within the window.
//   - Lifetimes: "5m" (the default; a marker without ttl) or "1h" at a higher write price.
//     When both are used, markers with the longer TTL must come before shorter ones in render
//     order.
//   - Automatic caching: a top-level "cache_control" makes the provider place the breakpoint
//     on the last cacheable block itself and advance it as the conversation grows. This
//     package treats it as the client's choice.
//   - thinking blocks cannot carry cache_control directly, and empty text blocks cannot be
//     cached; the planner skips both.
//   - A prefix shorter than the model's minimum cacheable length is processed without being
//     cached, silently. MinimumCacheableTokens holds the table: 4096 for Opus 4.6, Opus 4.5
//     and Haiku 4.5; 1024 for Sonnet 4.6, Sonnet 4.5, Opus 4.1, Opus 4, Sonnet 4 and Sonnet
//     3.7; 2048 for Haiku 3.5 and Haiku 3 (the documentation as quoted in
//     https://github.com/anthropics/anthropic-sdk-python/issues/1194; that report observed
//     2048 in practice for Sonnet 4.6, and https://docs.orq.ai/docs/proxy/prompt-caching lists
//     2048 for it); 1024 for Sonnet 3.5 and Opus 3
//     (https://docs.truefoundry.com/gateway/chat-completions-prompt-caching); 512 for Opus 5,
//     Fable 5 and Mythos 5, 1024 for Sonnet 5 and Opus 4.8, 2048 for Opus 4.7 from secondary
//     reports (https://dev.to/creeta/claudes-prompt-cache-fails-silently-below-1024-tokens-1ch1,
//     and LiteLLM's prompt-caching page, https://docs.litellm.ai/docs/completion/prompt_caching,
//     which agrees on the 5 generation but lists 4096 for Opus 4.7; where reports disagree the
//     table keeps the lower figure, so a marker is left out only where no report says it could
//     take effect). A family covers its later point releases (claude-sonnet-5 covers
//     claude-sonnet-5-5) until a row of their own says otherwise; a model the table does not
//     know (Haiku 5.5) has no minimum here.
//   - The planner places no marker where it cannot take effect: when the prefix up to the tail
//     is shorter than the minimum at DenseBytesPerToken (3) JSON bytes a token, denser than
//     agent traffic tokenizes, the decision is DecisionBelowMinimum and the body is left as it
//     is; a bridge that short is left out. Between that and the estimate reaching the minimum
//     the marker is planned with a below-minimum warning (Plan.BelowMinimum), as the estimate
//     is rough. Options.MinimumTokens gives a minimum the table does not know.
//
// Sizes are estimated without a tokenizer: EstimateTokens is the JSON byte count over
// BytesPerToken (4), an estimate that counts JSON syntax too.
//
// # OpenAI's rules (checked 2026-12; provider policy, subject to change)
//
// From OpenAI's prompt-caching guide (https://developers.openai.com/api/docs/guides/prompt-caching)
// and its Prompt Caching 201 cookbook
// (https://developers.openai.com/cookbook/examples/prompt_caching_201):
//
//   - Caching is automatic for prompts of 1,024 tokens or more (OpenAIMinimumTokens), on
//     Responses and Chat Completions alike: no marker. A hit needs an exact prefix match and
//     covers the longest matching prefix in 128-token blocks (OpenAIIncrementTokens), so a
//     prefix of n tokens holds OpenAICacheableTokens(n): n rounded down to 128, 0 under 1,024.
//   - The whole prompt is cacheable: messages, images, audio, tool definitions and
//     structured-output schemas. This package sizes it as tools, instructions (Responses),
//     then the input items or messages, in order: where OpenAI renders each is not
//     documented, so a change anywhere is taken to end the shared prefix there.
//   - A request is routed by a hash of its first tokens (typically the first 256) combined
//     with prompt_cache_key, so turns of one conversation reach the machines that hold its
//     prefix when they share a key; past about 15 requests a minute for one prefix and key,
//     requests overflow to other machines and miss.
//   - prompt_cache_retention "in_memory" (the default: 5 to 10 minutes of inactivity, at
//     most an hour) or "24h".
//   - From gpt-5.6, prompt_cache_options (mode "implicit", the default, in which OpenAI
//     places one breakpoint at the newest message, or "explicit"; ttl "30m", the only value)
//     and a prompt_cache_breakpoint {"mode":"explicit"} on content parts mark cache
//     entries, matched exactly at a breakpoint and not rounded to a block; up to four are
//     written per request; prompt_cache_options.ttl supersedes prompt_cache_retention and a
//     request with both is rejected (the API reference as the SDKs carry it, for example
//     openai-java's ResponseInputTextContent.PromptCacheBreakpoint and async-openai's
//     PromptCacheOptionsParam).
//
// The planner never changes an OpenAI body: Plan.PrefixCaching reports the prompt's size,
// what of it the cache can hold, the part the previous turn sent (everything before the
// model's last answer: the trailing run of assistant messages, function calls and reasoning
// items), the cache key (its length, never its value), the retention and the mode.
//
// # Planner
//
// A Responses or Chat Completions body is DecisionAutomatic (OpenAI caches it by itself),
// DecisionBelowMinimum when the prompt cannot reach 1,024 tokens even at DenseBytesPerToken
// bytes a token, DecisionClientSupplied when prompt_cache_options.mode is "explicit", or
// DecisionAmbiguous when a member the report reads appears twice; the client's
// prompt_cache_breakpoint markers are Plan.Existing.
//
// For Anthropic Messages, the decision order: a body in no supported format is DecisionUnsupported; a
// body in which a member the planner reads appears twice is DecisionAmbiguous; a body with any
// non-null cache_control (top level, tools, system blocks, content blocks, blocks nested in a
// tool_result) is DecisionClientSupplied, with warnings for what the API would reject (more
// than 4 markers, a longer TTL after a shorter one, an unknown ttl); a prefix too short for
// the model's minimum is DecisionBelowMinimum. Otherwise the tail marker
// goes on the last cacheable message block (else the last system block, else the last tool):
// an agent's next request repeats the whole current request, so that is where the stable
// prefix ends, and where automatic caching would put it. When the request looks like an
// agent turn (…, user, assistant, user) and the tail is more than LookbackBlocks blocks past
// the end of the message before the assistant turn (where the previous request's tail was),
// a bridge marker goes on the last cacheable block within the window. At most two markers,
// both with the same TTL, so the 4-marker limit and TTL ordering hold.
//
// Wire format of the change: before the closing brace of the chosen block,
//
//	,"cache_control":{"type":"ephemeral"}              (TTL "5m", the default)
//	,"cache_control":{"type":"ephemeral","ttl":"1h"}   (TTL "1h")
//
// and for a string system prompt or string message content, the string's own bytes wrapped
// as [{"type":"text","text":<string>,"cache_control":{...}}].
//
// # Pruner
//
// A tool output that is byte for byte the content of an earlier one, and at least
// PruneOptions.MinBytes long, becomes a JSON string naming the first one. Per API:
//
//   - Anthropic Messages: a tool_result block's content (string or array), in messages;
//   - OpenAI Responses: the output (string or content parts) of a function_call_output or
//     custom_tool_call_output item, in input;
//   - OpenAI Chat Completions: the content (string or text parts) of a role "tool" message.
//
// The reference reads
//
//	"[agent-rewind: identical to the earlier tool result at messages[2].content[0] (tool_use_id toolu_01); its content is omitted here to save tokens]"
//	"[agent-rewind: identical to the earlier tool result at input[9].output (call_id call_list_0); its content is omitted here to save tokens]"
//	"[agent-rewind: identical to the earlier tool result at messages[5].content (tool_call_id call_read_0); its content is omitted here to save tokens]"
//
// (the call id only when it is short and plainly spelled). Identical means the content
// alone: outputs that differ only in their call ids (two calls never share one) are
// repeats, and each keeps its own call id, so every call still has its answer; outputs that
// differ in any byte of their content (Codex's exec_command output carries a chunk id and a
// wall time) are not. A reference is never longer than what it replaces, and an output whose
// content carries a cache marker (cache_control, or OpenAI's prompt_cache_breakpoint) is
// never replaced. Decisions depend only on earlier outputs, so an agent loop's requests stay
// prefix-stable. The format is PruneOptions.Format when given (a gateway knows it from the
// request path), else detected (below); a body in no supported format passes through
// unchanged, with PruneResult.Reason saying why.
//
// # Formats
//
// A body with "input" and no "messages" is a Responses body. A "messages" body is Chat
// Completions when it has something only Chat Completions has (a system, developer or tool
// role, tool_calls, tool_call_id, an image_url or input_audio part, a tool with a
// "function", a string tool_choice, a top-level member such as max_completion_tokens,
// response_format, stream_options or prompt_cache_key), Anthropic Messages when it has
// something only that API has (a top-level system or thinking, a tool_use, tool_result,
// thinking or image block, a tool with an input_schema, cache_control), neither when it has
// both, and assumed to be Anthropic Messages (DetectionAssumed) when it has neither: user and
// assistant turns of plain text are valid in both, and a caller that knows says so with the
// Format option. Results carry the Format and its Detection.
//
// # Compare
//
// Both bodies are read as one API (CompareOptions.Format, else detected; a body that fits
// both messages APIs is read as its pair's) and reduced to a canonical form: object members
// sorted, whitespace dropped, strings re-escaped minimally, numbers as written, and cache
// markers left out (they move every turn; BodySummary.CacheControl reports them): Anthropic
// cache_control members of tools, system blocks and content blocks, OpenAI
// prompt_cache_breakpoint members anywhere. The messages (Anthropic, Chat Completions) or
// input items (Responses, where a string input is one message) are compared in order, each
// as its head (everything but its content) and its content blocks or parts. For Anthropic
// Messages every other top-level member is a significant setting. For OpenAI the members
// that do not enter the prompt (stream, stream_options, store, include, metadata, Codex's
// client_metadata, user, safety_identifier, background, sampling settings and output limits)
// are reported in Comparison.IgnoredSettings and not compared; every other member counts,
// prompt_cache_key too (it routes the request to the machines holding its prefix), and as
// OpenAI does not document where it renders a setting, a changed one leaves no reusable
// prefix. The ideas come from Headroom (Apache-2.0); see third_party/headroom/NOTICE.md for
// what was adapted.
//
// Nothing in a Plan, PruneResult, Comparison or error quotes the body: only locations such
// as "messages[3].content[1]" or "input[6]", counts and sizes.
//
// PlanRequest, Plan.Apply, Preserve, Prune, Compare and CompareWith are safe for concurrent use; the
// planner and pruner reuse pooled scratch space, so a call allocates little beyond its result
// and the output body (see the benchmarks in bench_test.go).
package cacheplan
