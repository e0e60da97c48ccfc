package cacheplan

import (
	"fmt"

	"github.com/agent-rewind/rewind/internal/jsonscan"
)

// PrefixCaching is what a Plan says about OpenAI's automatic prefix caching, for a Responses
// or Chat Completions body. OpenAI needs no marker: it caches a prompt's prefix by itself and
// a later request that starts with the same tokens reads them back. What a body can show is
// how long that prefix is, how much of it the cache holds (whole blocks past a minimum), and
// which part of it the previous turn of an agent loop already sent.
type PrefixCaching struct {
	MinimumTokens   int `json:"minimumTokens"`   // OpenAIMinimumTokens
	IncrementTokens int `json:"incrementTokens"` // OpenAIIncrementTokens
	// CacheableTokens is how much of the request's estimated prompt (Plan's
	// EstimatedPrefixTokens) the cache holds for a next request that repeats it: whole blocks,
	// none under the minimum.
	CacheableTokens int `json:"cacheableTokens"`
	// PreviousTurn is the part of this request the previous turn of its conversation sent
	// (everything before the model's last answer), which this request can read from the
	// cache; nil when the request holds no answer of the model yet.
	PreviousTurn *TurnPrefix `json:"previousTurn"`
	// PromptCacheKey: the body sets prompt_cache_key (PromptCacheKeyBytes long; its value is
	// never shown). OpenAI routes a request by a hash of its first tokens combined with the
	// key, so turns that share a key reach the machines that hold their prefix.
	PromptCacheKey      bool `json:"promptCacheKey"`
	PromptCacheKeyBytes int  `json:"promptCacheKeyBytes,omitempty"`
	// Retention is prompt_cache_retention ("in_memory" or "24h"), Mode is
	// prompt_cache_options.mode ("implicit" or "explicit", gpt-5.6 and later).
	Retention string `json:"retention,omitempty"`
	Mode      string `json:"mode,omitempty"`
	// ServerState: the body continues state the provider holds (previous_response_id,
	// conversation, an item_reference), which comes before what the body shows.
	ServerState bool `json:"serverState"`
}

// TurnPrefix is the part of a request that an earlier request of its conversation sent.
type TurnPrefix struct {
	// NewFrom is the first item or message the current turn added (the model's answer to
	// the previous request, then the new inputs).
	NewFrom Location `json:"newFrom"`
	// Bytes and EstimatedTokens size tools, instructions and the items before NewFrom;
	// CacheableTokens is what of it a cache entry holds.
	Bytes           int `json:"bytes"`
	EstimatedTokens int `json:"estimatedTokens"`
	CacheableTokens int `json:"cacheableTokens"`
}

// openaiScan is what the planner collects for OpenAI's caching as it walks a body.
type openaiScan struct {
	key         bool
	keyBytes    int
	retention   string
	mode        string
	options     bool
	serverState bool
}

// modelOutputTypes are the Responses input items the model produced in an earlier turn: a
// run of them ends the previous request's prompt. An item with role "assistant" is one too.
var modelOutputTypes = []string{"function_call", "custom_tool_call", "reasoning", "local_shell_call", "shell_call",
	"apply_patch_call", "computer_call", "web_search_call", "file_search_call", "code_interpreter_call",
	"image_generation_call", "mcp_call", "mcp_list_tools", "mcp_approval_request", "tool_search_call"}

// known returns the value of a string token when it is one of values, else a placeholder:
// a value is echoed only when it is one of the API's own words.
func known(tok []byte, esc bool, values ...string) string {
	for _, v := range values {
		if jsonscan.StringIs(tok, esc, v) {
			return v
		}
	}
	return "(unrecognised)"
}

// openAITop reads the top-level members that steer OpenAI's caching.
func (w *planner) openAITop(o *jsonscan.Object) error {
	d, v := w.data, o.Value()
	str := func() ([]byte, bool, error) {
		if d[v] != '"' {
			return nil, false, nil
		}
		end, esc, err := jsonscan.ScanString(d, v)
		if err != nil {
			return nil, false, err
		}
		o.Consumed(end)
		return d[v:end], esc, nil
	}
	switch {
	case o.KeyIs("prompt_cache_key"):
		tok, _, err := str()
		if err != nil {
			return err
		}
		if tok != nil {
			w.oa.key = true
			w.oa.keyBytes = len(jsonscan.AppendUnquoted(nil, tok))
		}
	case o.KeyIs("prompt_cache_retention"):
		tok, esc, err := str()
		if err != nil || tok == nil {
			return err
		}
		w.oa.retention = known(tok, esc, "in_memory", "24h")
	case o.KeyIs("prompt_cache_options"):
		if d[v] != '{' {
			return nil
		}
		w.oa.options = true
		opts, err := jsonscan.OpenObject(d, v, o.Depth())
		if err != nil {
			return err
		}
		for opts.Next() {
			if !opts.KeyIs("mode") || d[opts.Value()] != '"' {
				continue
			}
			end, esc, err := jsonscan.ScanString(d, opts.Value())
			if err != nil {
				return err
			}
			opts.Consumed(end)
			w.oa.mode = known(d[opts.Value():end], esc, "implicit", "explicit")
		}
		if err := opts.Err(); err != nil {
			return err
		}
		o.Consumed(opts.End())
	case o.KeyIs("previous_response_id"), o.KeyIs("conversation"):
		if d[v] != 'n' {
			w.oa.serverState = true
		}
	}
	return nil
}

// input walks a Responses "input": a string (one user message) or an array of items.
func (w *planner) input(o *jsonscan.Object) error {
	d := w.data
	v := o.Value()
	if d[v] == '"' {
		w.p.Counts.Messages, w.p.Counts.MessageBlocks = 1, 1
		return nil
	}
	if d[v] != '[' {
		return nil
	}
	a, err := jsonscan.OpenArray(d, v, o.Depth())
	if err != nil {
		return err
	}
	for a.Next() {
		w.p.Counts.Messages++
		info := msgInfo{first: w.blocks}
		var end int
		if d[a.Value()] == '{' {
			end, err = w.inputItem(a.Index(), a.Value(), a.Depth(), &info)
		} else {
			end, err = jsonscan.SkipValue(d, a.Value(), a.Depth())
		}
		if err != nil {
			return err
		}
		a.Consumed(end)
		info.end = end
		w.s.items = append(w.s.items, info)
	}
	if err := a.Err(); err != nil {
		return err
	}
	o.Consumed(a.End())
	return nil
}

// inputItem reads one input item: whether the model produced it, its content parts and the
// cache breakpoints on them.
func (w *planner) inputItem(index, i, depth int, info *msgInfo) (int, error) {
	d := w.data
	it, err := jsonscan.OpenObject(d, i, depth)
	if err != nil {
		return i, err
	}
	for it.Next() {
		v := it.Value()
		switch {
		case it.KeyIs("type"), it.KeyIs("role"):
			if d[v] != '"' {
				continue
			}
			end, esc, err := jsonscan.ScanString(d, v)
			if err != nil {
				return i, err
			}
			it.Consumed(end)
			tok := d[v:end]
			if it.KeyIs("role") {
				info.assistant = info.assistant || jsonscan.StringIs(tok, esc, "assistant")
				continue
			}
			for _, t := range modelOutputTypes {
				info.assistant = info.assistant || jsonscan.StringIs(tok, esc, t)
			}
			if jsonscan.StringIs(tok, esc, "item_reference") {
				w.oa.serverState = true
			}
		case it.KeyIs("content"), it.KeyIs("output"):
			field := ""
			if it.KeyIs("output") {
				field = "output"
			}
			end, err := w.parts(Location{Section: SectionInput, Index: index, Sub: -1, Field: field}, v, it.Depth(), field == "")
			if err != nil {
				return i, err
			}
			it.Consumed(end)
		}
	}
	if err := it.Err(); err != nil {
		return i, err
	}
	return it.End(), nil
}

// parts walks a content (or output) value: a string is one block, an array's objects are
// parts, and a part with a prompt_cache_breakpoint is a client's marker. count says whether
// the parts count as the request's message blocks.
func (w *planner) parts(at Location, v, depth int, count bool) (int, error) {
	d := w.data
	if d[v] != '[' {
		if count && d[v] == '"' {
			w.blocks++
			w.p.Counts.MessageBlocks++
		}
		return jsonscan.SkipValue(d, v, depth)
	}
	a, err := jsonscan.OpenArray(d, v, depth)
	if err != nil {
		return v, err
	}
	for a.Next() {
		if count {
			w.blocks++
			w.p.Counts.MessageBlocks++
		}
		if d[a.Value()] != '{' {
			continue
		}
		b, err := readBlock(d, a.Value(), a.Depth(), w.s.nested)
		if err != nil {
			return v, err
		}
		w.s.nested = b.nested[:0]
		a.Consumed(b.end)
		if b.breakpoint {
			loc := at
			loc.Block = a.Index()
			w.s.oaMarks = append(w.s.oaMarks, Breakpoint{Location: loc, Role: RoleClient, TTL: OpenAIBreakpointTTL})
		}
	}
	if err := a.Err(); err != nil {
		return v, err
	}
	return a.End(), nil
}

// decideOpenAI reports on OpenAI's automatic caching of a Responses or Chat Completions body.
func (w *planner) decideOpenAI(top *topLevel) {
	p := w.p
	pc := &PrefixCaching{
		MinimumTokens: OpenAIMinimumTokens, IncrementTokens: OpenAIIncrementTokens,
		PromptCacheKey: w.oa.key, PromptCacheKeyBytes: w.oa.keyBytes,
		Retention: w.oa.retention, Mode: w.oa.mode, ServerState: w.oa.serverState,
	}
	p.PrefixCaching = pc
	p.MinimumTokens = OpenAIMinimumTokens
	p.TTL = ""
	p.Existing = append(p.Existing, w.s.oaMarks...)
	p.AutomaticCaching = w.oa.mode != "explicit"

	// The prompt: tools and instructions, then the input items or messages in order.
	head := 0
	if top.tools != 0 {
		head += top.toolsEnd - top.tools
	}
	items, section, start, end := w.s.msgs, SectionChat, top.messages, top.messagesEnd
	if p.Format == FormatResponses {
		items, section, start, end = w.s.items, SectionInput, top.inputAt, top.inputEnd
		if top.instructions != 0 {
			head += top.instructionsEnd - top.instructions
			p.Counts.SystemBlocks = 1
		}
	}
	p.PrefixBytes = head + end - start
	p.EstimatedPrefixTokens = EstimateTokens(p.PrefixBytes)
	pc.CacheableTokens = OpenAICacheableTokens(p.EstimatedPrefixTokens)

	// The previous request of an agent loop ended where the model's last answer begins: the
	// trailing run of model output (an assistant message, function calls, reasoning) before
	// the new inputs.
	k := len(items)
	for k > 0 && !items[k-1].assistant {
		k--
	}
	for k > 0 && items[k-1].assistant {
		k--
	}
	if k > 0 && k < len(items) {
		b := head + items[k-1].end - start
		t := EstimateTokens(b)
		pc.PreviousTurn = &TurnPrefix{NewFrom: Location{Section: section, Index: k, Block: -1, Sub: -1}, Bytes: b, EstimatedTokens: t, CacheableTokens: OpenAICacheableTokens(t)}
	}

	switch {
	case p.PrefixBytes < OpenAIMinimumTokens*DenseBytesPerToken:
		p.Decision = DecisionBelowMinimum
		p.BelowMinimum = true
		p.Reason = fmt.Sprintf("the whole prompt (%d bytes, about %d tokens) cannot reach OpenAI's %d-token minimum: none of it is cached", p.PrefixBytes, p.EstimatedPrefixTokens, OpenAIMinimumTokens)
	case w.oa.mode == "explicit":
		p.Decision = DecisionClientSupplied
		p.Reason = "prompt_cache_options.mode is explicit: OpenAI caches only at the client's prompt_cache_breakpoint markers (gpt-5.6 and later)"
	default:
		p.Decision = DecisionAutomatic
		p.Reason = fmt.Sprintf("OpenAI caches the prompt's prefix by itself, no marker to place: a next request that repeats this one reads up to about %d of its %d tokens from the cache (whole %d-token blocks from %d)",
			pc.CacheableTokens, p.EstimatedPrefixTokens, OpenAIIncrementTokens, OpenAIMinimumTokens)
	}
	if top.dup {
		p.Decision = DecisionAmbiguous
		p.Reason = "a member the report reads (tools, instructions, input, messages, model) appears twice: its sizes may not be the provider's"
	}
	if p.Decision != DecisionBelowMinimum && p.EstimatedPrefixTokens < OpenAIMinimumTokens {
		p.BelowMinimum = true
		p.warn("below-minimum", fmt.Sprintf("the estimated prompt (%d tokens) is under OpenAI's %d-token minimum: it will probably not be cached yet", p.EstimatedPrefixTokens, OpenAIMinimumTokens))
	}
	if !pc.PromptCacheKey {
		p.warn("no-prompt-cache-key", "no prompt_cache_key: OpenAI routes the request by a hash of its first tokens alone, so turns of one conversation may reach machines without its prefix; set one key per conversation or agent session, the same on every turn (keep each key and prefix under about 15 requests a minute, past which requests overflow to other machines)")
	}
	if pc.ServerState {
		p.warn("server-state", "the request continues state OpenAI holds (previous_response_id, conversation or an item_reference), which comes before what the body shows: the sizes here cover only the body")
	}
	if w.oa.options && pc.Retention != "" {
		p.warn("cache-options-conflict", "both prompt_cache_options and prompt_cache_retention are set; OpenAI rejects a request with both (prompt_cache_options.ttl supersedes prompt_cache_retention from gpt-5.6)")
	}
	if w.oa.mode == "explicit" && len(p.Existing) == 0 {
		p.warn("explicit-without-breakpoint", "prompt_cache_options.mode is explicit but no content part carries a prompt_cache_breakpoint: nothing of this request is cached")
	}
}
