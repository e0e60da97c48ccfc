package cacheplan

import (
	"bytes"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/agent-rewind/rewind/internal/jsonscan"
)

// Class is how a request relates to the one before it, as far as its cacheable prefix goes.
type Class string

// The classes of Compare.
const (
	ClassUnchanged        Class = "unchanged"         // same settings, same messages: a repeat
	ClassAppendedMessages Class = "appended-messages" // the previous messages, unchanged, then new ones
	ClassAppendedBlocks   Class = "appended-blocks"   // the previous last message grew new blocks (and maybe more messages follow)
	ClassDivergence       Class = "divergence"        // a setting, or a message or block before the end, changed
)

// Comparison is the result of Compare. It names places and counts; it never quotes a
// prompt or a response.
type Comparison struct {
	Class Class `json:"classification"`
	// Format is the API both requests were read as; Detection says how (a request that fits
	// both messages APIs is read as its pair's).
	Format    Format    `json:"format"`
	Detection Detection `json:"formatDetection"`
	// FirstChangedPath is the JSON path of the first change in render order: a request
	// setting ("model", "tools[2]", "system", "thinking"), or "messages[5]" (the message's
	// role or other fields, or a message missing from the current request),
	// "messages[5].content" or "messages[5].content[1]". Empty when nothing changed.
	FirstChangedPath string `json:"firstChangedPath,omitempty"`
	// ChangedSettings lists every top-level member other than messages (or input) that
	// differs and can change the prompt.
	ChangedSettings []string `json:"changedSettings"`
	// IgnoredSettings lists the members that differ but do not enter an OpenAI prompt
	// (stream, store, include, metadata, sampling and output limits...): reported, not
	// compared. Always empty for Anthropic Messages, whose every member counts.
	IgnoredSettings []string    `json:"ignoredSettings"`
	Previous        BodySummary `json:"previous"`
	Current         BodySummary `json:"current"`
	// CommonMessages is how many leading messages are identical.
	CommonMessages   int `json:"commonMessages"`
	AppendedMessages int `json:"appendedMessages"`
	// AppendedBlocks counts the content blocks added after the previous request's end.
	AppendedBlocks int `json:"appendedBlocks"`
	// ReusablePrefixBytes is the size of the previous request's JSON (tools, system,
	// messages) before the first change; EstimatedReusablePrefixTokens is that over 4.
	ReusablePrefixBytes           int `json:"reusablePrefixBytes"`
	EstimatedReusablePrefixTokens int `json:"estimatedReusablePrefixTokens"`
	// CacheableReusableTokens, for OpenAI bodies, is what of that prefix OpenAI's cache
	// holds: whole 128-token blocks, none under 1,024 (then absent).
	CacheableReusableTokens int `json:"cacheableReusableTokens,omitempty"`
	// CacheControlMoved: the two requests carry cache markers (cache_control, or OpenAI's
	// prompt_cache_breakpoint) at different places. Markers are not compared as content
	// (they move every turn), only reported.
	CacheControlMoved bool      `json:"cacheControlMoved"`
	Recommendation    string    `json:"recommendation"`
	Warnings          []Warning `json:"warnings"`
	Note              string    `json:"note"`
}

// BodySummary describes one of the two requests. Messages counts messages, or a Responses
// body's input items; CacheControl lists its cache markers.
type BodySummary struct {
	Bytes        int        `json:"bytes"`
	Messages     int        `json:"messages"`
	Blocks       int        `json:"blocks"`
	CacheControl []Location `json:"cacheControl"`
}

// CompareNote is the caveat every comparison carries.
const CompareNote = "a conservative content comparison (request settings significant, object member order ignored, cache markers left out), not proof of a provider cache hit"

type span struct{ start, end int } // offsets in parsedBody.buf, or in the raw body

type setting struct {
	name  string
	canon span
	elems []span // canonical elements, for an array setting
	array bool
	raw   span
}

type parsedMsg struct {
	head          span // canonical message without its content
	stringContent bool
	noContent     bool
	blocks        []span // canonical blocks (one for string content)
	rawStart      int
	blockEnds     []int // raw end offset of each block
}

type parsedBody struct {
	data        []byte
	format      Format
	buf         []byte
	settings    []setting
	ignored     []setting // OpenAI members that do not enter the prompt
	msgs        []parsedMsg
	markers     []Location
	messages    span   // raw: the messages (or input) array
	array       string // "messages" or "input"
	stringInput bool   // a Responses input given as one string
	blocks      int
}

// CompareOptions tune CompareWith.
type CompareOptions struct {
	// Format is the API both bodies are for when the caller knows it; empty means detect
	// each from its shape.
	Format Format
}

// Compare compares two consecutive request bodies, previous then current, and classifies
// the current one: unchanged, appended messages (or input items), appended blocks, or
// divergence. It is CompareWith with the formats detected.
func Compare(previous, current []byte) (*Comparison, error) {
	return CompareWith(previous, current, CompareOptions{})
}

// CompareWith compares two consecutive request bodies of one API: Anthropic Messages, OpenAI
// Responses or Chat Completions. Both must be UTF-8 JSON objects of that API's shape; a body
// that fits both messages APIs (plain user and assistant text) is read as its pair's, and two
// bodies of different APIs are refused with ErrUnsupportedFormat. Errors say which input was
// at fault and never quote it.
func CompareWith(previous, current []byte, opts CompareOptions) (*Comparison, error) {
	pf, pd, err := compareFormat("previous", previous, opts.Format)
	if err != nil {
		return nil, err
	}
	cf, cd, err := compareFormat("current", current, opts.Format)
	if err != nil {
		return nil, err
	}
	switch {
	case pf == cf:
	case pd == DetectionAssumed && cd == DetectedByShape && cf == FormatOpenAIChat:
		pf = cf
	case cd == DetectionAssumed && pd == DetectedByShape && pf == FormatOpenAIChat:
		cf = pf
	default:
		return nil, fmt.Errorf("%w: the previous request is %s and the current one %s: compare two requests to one API", ErrUnsupportedFormat, pf, cf)
	}
	detection := pd
	if cd == DetectedByShape || cd == DetectionGiven {
		detection = cd
	}
	prev, err := parseForCompare(previous, pf)
	if err != nil {
		return nil, fmt.Errorf("previous request: %w", err)
	}
	cur, err := parseForCompare(current, cf)
	if err != nil {
		return nil, fmt.Errorf("current request: %w", err)
	}
	c := &Comparison{
		Format:          pf,
		Detection:       detection,
		ChangedSettings: []string{},
		IgnoredSettings: []string{},
		Previous:        prev.summary(),
		Current:         cur.summary(),
		Warnings:        []Warning{},
		Note:            CompareNote,
	}
	c.CacheControlMoved = !slices.Equal(prev.markers, cur.markers)
	for _, name := range settingOrder(prev.ignored, cur.ignored) {
		ps, cs := findSetting(prev.ignored, name), findSetting(cur.ignored, name)
		if ps == nil || cs == nil || !bytes.Equal(prev.bytes(ps.canon), cur.bytes(cs.canon)) {
			c.IgnoredSettings = append(c.IgnoredSettings, printableName(name))
		}
	}

	// Settings, in render order: model and tools, then system, then the rest by name.
	firstSetting := ""
	var toolsBytes, systemBytes int
	changed := map[string]bool{}
	for _, name := range settingOrder(prev.settings, cur.settings) {
		ps, cs := prev.setting(name), cur.setting(name)
		if name == "tools" && ps != nil {
			toolsBytes = ps.raw.end - ps.raw.start
		}
		if (name == "system" || name == "instructions") && ps != nil {
			systemBytes = ps.raw.end - ps.raw.start
		}
		path, same := compareSetting(prev, cur, name, ps, cs)
		if same {
			continue
		}
		changed[name] = true
		c.ChangedSettings = append(c.ChangedSettings, printableName(name))
		if firstSetting == "" {
			firstSetting = path
		}
	}

	// Messages (or input items). A Responses input given as one string is one message.
	n := min(len(prev.msgs), len(cur.msgs))
	k := 0
	for k < n && prev.stringInput == cur.stringInput && prev.msgEqual(cur, k, k) {
		k++
	}
	c.CommonMessages = k
	reusable := 0 // raw bytes of prev.messages before the first change
	switch {
	case k == len(prev.msgs) && k == len(cur.msgs):
		c.Class = ClassUnchanged
		reusable = prev.messages.end - prev.messages.start
	case k == len(prev.msgs):
		c.Class = ClassAppendedMessages
		c.AppendedMessages = len(cur.msgs) - k
		for _, m := range cur.msgs[k:] {
			c.AppendedBlocks += len(m.blocks)
		}
		reusable = prev.messages.end - prev.messages.start
	case prev.stringInput || cur.stringInput:
		c.Class = ClassDivergence
		c.FirstChangedPath = "input"
	default:
		pm := &prev.msgs[k]
		reusable = pm.rawStart - prev.messages.start
		if k == len(prev.msgs)-1 && k < len(cur.msgs) && prev.blocksPrefix(cur, k) {
			cm := &cur.msgs[k]
			c.Class = ClassAppendedBlocks
			c.AppendedMessages = len(cur.msgs) - k - 1
			c.AppendedBlocks = len(cm.blocks) - len(pm.blocks)
			for _, m := range cur.msgs[k+1:] {
				c.AppendedBlocks += len(m.blocks)
			}
			if len(pm.blockEnds) > 0 {
				reusable = pm.blockEnds[len(pm.blockEnds)-1] - prev.messages.start
			}
			break
		}
		c.Class = ClassDivergence
		c.FirstChangedPath, reusable = prev.firstDifference(cur, k)
	}
	switch {
	case pf != FormatMessages && len(changed) > 0:
		// OpenAI does not document where it renders a setting: a changed one is taken to
		// invalidate the whole prefix.
		reusable = 0
	case pf != FormatMessages:
		reusable += toolsBytes + systemBytes
	case changed["model"] || changed["tools"]:
		reusable = 0
	case changed["system"]:
		reusable = toolsBytes
	case len(changed) > 0:
		reusable = toolsBytes + systemBytes
	default:
		reusable += toolsBytes + systemBytes
	}
	if firstSetting != "" {
		c.Class = ClassDivergence
		c.FirstChangedPath = firstSetting
	}
	c.ReusablePrefixBytes = reusable
	c.EstimatedReusablePrefixTokens = EstimateTokens(reusable)
	if pf != FormatMessages {
		c.CacheableReusableTokens = OpenAICacheableTokens(c.EstimatedReusablePrefixTokens)
		c.adviseOpenAI(prev, cur)
		return c, nil
	}
	c.advise(prev, cur)
	return c, nil
}

// compareFormat detects (or checks) one body's format for Compare.
func compareFormat(which string, data []byte, given Format) (Format, Detection, error) {
	if !utf8.Valid(data) {
		return "", "", fmt.Errorf("%s request: %w", which, ErrNotUTF8)
	}
	f, d, why, err := detectFormat(data, given)
	if err != nil {
		return "", "", fmt.Errorf("%s request: %w", which, err)
	}
	if f == FormatOther {
		return "", "", fmt.Errorf("%s request: %w: %s", which, ErrUnsupportedFormat, unsupportedReason(why))
	}
	return f, d, nil
}

func (c *Comparison) advise(prev, cur *parsedBody) {
	switch c.Class {
	case ClassUnchanged:
		c.Recommendation = "The current request repeats the previous one: its whole prefix can be read from the prompt cache, and an exact replay (agent-rewind gateway) could answer it without a model call."
	case ClassAppendedMessages, ClassAppendedBlocks:
		c.Recommendation = "History is unchanged and the request only grew: keep a cache_control breakpoint at the end of every request (or let agent-rewind gateway --preserve-cache add one) so each request reads the previous prefix from the cache."
		if c.AppendedBlocks > LookbackBlocks {
			c.Warnings = append(c.Warnings, Warning{"lookback", fmt.Sprintf("%d blocks were appended since the previous request, more than the %d-block lookback: a single trailing breakpoint will not find the previous cache entry; add one within %d blocks of the previous end (the gateway's planner does)", c.AppendedBlocks, LookbackBlocks, LookbackBlocks)})
		}
	case ClassDivergence:
		if len(c.ChangedSettings) > 0 {
			c.Recommendation = fmt.Sprintf("The request setting %s changed, which invalidates the cached prefix from there on (a model or tools change invalidates all of it). Keep settings fixed within a session; put changing values in the newest message instead.", c.FirstChangedPath)
		} else {
			c.Recommendation = fmt.Sprintf("Earlier history changed at %s: everything from there is processed again and written to the cache at the write price. Look for what rewrote it (a timestamp, an edited or truncated history, a pruned or reordered tool result) and keep history append-only.", c.FirstChangedPath)
		}
	}
	if len(prev.markers) == 0 && len(cur.markers) == 0 {
		c.Warnings = append(c.Warnings, Warning{"no-cache-control", "neither request carries cache_control, so nothing is cached: add a breakpoint or a top-level cache_control (agent-rewind gateway --preserve-cache adds one)"})
	}
}

func (c *Comparison) adviseOpenAI(prev, cur *parsedBody) {
	switch c.Class {
	case ClassUnchanged:
		c.Recommendation = "The current request repeats the previous one: OpenAI's cache holds its prefix (whole 128-token blocks from 1,024 tokens), and an exact replay (agent-rewind gateway) could answer it without a model call."
	case ClassAppendedMessages, ClassAppendedBlocks:
		c.Recommendation = "History is unchanged and the request only grew: OpenAI caches the prefix by itself; keep prompt_cache_key the same on every turn, so the request reaches the machines that hold it."
	case ClassDivergence:
		switch {
		case c.FirstChangedPath == "prompt_cache_key":
			c.Recommendation = "prompt_cache_key changed: OpenAI routes a request by its first tokens combined with the key, so this one probably reaches machines without the previous prefix. Keep one key per conversation or agent session."
		case c.FirstChangedPath == "model":
			c.Recommendation = "The model changed: a cache entry belongs to one model, so nothing of the previous prefix is read. Keep the model fixed within a session."
		case len(c.ChangedSettings) > 0:
			c.Recommendation = fmt.Sprintf("The request setting %s changed; OpenAI does not document where it renders settings, so the whole prefix is taken to be invalid. Keep settings fixed within a session; put changing values in the newest input instead.", c.FirstChangedPath)
		default:
			c.Recommendation = fmt.Sprintf("Earlier history changed at %s: everything from there is processed again. Look for what rewrote it (a timestamp, an edited or truncated history, a dropped reasoning item, a pruned or reordered tool output) and keep history append-only.", c.FirstChangedPath)
		}
	}
	if c.EstimatedReusablePrefixTokens > 0 && c.EstimatedReusablePrefixTokens < OpenAIMinimumTokens {
		c.Warnings = append(c.Warnings, Warning{"below-minimum", fmt.Sprintf("the shared prefix (about %d tokens) is under OpenAI's %d-token minimum: none of it is read from the cache", c.EstimatedReusablePrefixTokens, OpenAIMinimumTokens)})
	}
	if prev.setting("prompt_cache_key") == nil && cur.setting("prompt_cache_key") == nil {
		c.Warnings = append(c.Warnings, Warning{"no-prompt-cache-key", "neither request sets prompt_cache_key: OpenAI routes them by a hash of their first tokens alone, so a conversation's turns may reach machines without its prefix; set one key per conversation, the same on every turn"})
	}
}

// settingOrder lists the names of settings of either body: model, tools and system (or
// instructions) first (render order), then the rest by name.
func settingOrder(a, b []setting) []string {
	var names []string
	for _, list := range [2][]setting{a, b} {
		for _, s := range list {
			if !slices.Contains(names, s.name) {
				names = append(names, s.name)
			}
		}
	}
	rank := func(n string) int {
		switch n {
		case "model":
			return 0
		case "tools":
			return 1
		case "system", "instructions":
			return 2
		}
		return 3
	}
	slices.SortFunc(names, func(x, y string) int {
		if d := rank(x) - rank(y); d != 0 {
			return d
		}
		return bytes.Compare([]byte(x), []byte(y))
	})
	return names
}

func compareSetting(prev, cur *parsedBody, name string, ps, cs *setting) (string, bool) {
	if ps == nil || cs == nil {
		return printableName(name), false
	}
	if !ps.array || !cs.array || (name != "tools" && name != "system" && name != "instructions") {
		return printableName(name), bytes.Equal(prev.bytes(ps.canon), cur.bytes(cs.canon))
	}
	for j := range min(len(ps.elems), len(cs.elems)) {
		if !bytes.Equal(prev.bytes(ps.elems[j]), cur.bytes(cs.elems[j])) {
			return fmt.Sprintf("%s[%d]", name, j), false
		}
	}
	if len(ps.elems) != len(cs.elems) {
		return fmt.Sprintf("%s[%d]", name, min(len(ps.elems), len(cs.elems))), false
	}
	return name, true
}

// printableName returns a top-level member name for output: API field names pass, anything
// else is not echoed.
func printableName(name string) string {
	if len(name) == 0 || len(name) > 64 {
		return "(unrecognised setting)"
	}
	for _, c := range []byte(name) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return "(unrecognised setting)"
		}
	}
	return name
}

func (p *parsedBody) bytes(s span) []byte { return p.buf[s.start:s.end] }

func (p *parsedBody) setting(name string) *setting { return findSetting(p.settings, name) }

func findSetting(list []setting, name string) *setting {
	for i := range list {
		if list[i].name == name {
			return &list[i]
		}
	}
	return nil
}

func (p *parsedBody) summary() BodySummary {
	m := p.markers
	if m == nil {
		m = []Location{}
	}
	return BodySummary{Bytes: len(p.data), Messages: len(p.msgs), Blocks: p.blocks, CacheControl: m}
}

func (p *parsedBody) msgEqual(q *parsedBody, i, j int) bool {
	a, b := &p.msgs[i], &q.msgs[j]
	if !bytes.Equal(p.bytes(a.head), q.bytes(b.head)) || a.stringContent != b.stringContent || a.noContent != b.noContent || len(a.blocks) != len(b.blocks) {
		return false
	}
	for k := range a.blocks {
		if !bytes.Equal(p.bytes(a.blocks[k]), q.bytes(b.blocks[k])) {
			return false
		}
	}
	return true
}

// blocksPrefix reports whether message k of p, with array content, is message k of q with
// blocks appended.
func (p *parsedBody) blocksPrefix(q *parsedBody, k int) bool {
	a, b := &p.msgs[k], &q.msgs[k]
	if a.stringContent || b.stringContent || a.noContent || b.noContent || len(b.blocks) <= len(a.blocks) {
		return false
	}
	if !bytes.Equal(p.bytes(a.head), q.bytes(b.head)) {
		return false
	}
	for j := range a.blocks {
		if !bytes.Equal(p.bytes(a.blocks[j]), q.bytes(b.blocks[j])) {
			return false
		}
	}
	return true
}

// firstDifference locates the first change in message k and the reusable raw bytes of p's
// messages before it.
func (p *parsedBody) firstDifference(q *parsedBody, k int) (string, int) {
	a := &p.msgs[k]
	atMessage := fmt.Sprintf("%s[%d]", p.array, k)
	before := a.rawStart - p.messages.start
	if k >= len(q.msgs) {
		return atMessage, before
	}
	b := &q.msgs[k]
	if !bytes.Equal(p.bytes(a.head), q.bytes(b.head)) {
		return atMessage, before
	}
	if a.stringContent || b.stringContent || a.noContent || b.noContent {
		return atMessage + ".content", before
	}
	for j := range min(len(a.blocks), len(b.blocks)) {
		if !bytes.Equal(p.bytes(a.blocks[j]), q.bytes(b.blocks[j])) {
			if j > 0 {
				before = a.blockEnds[j-1] - p.messages.start
			}
			return fmt.Sprintf("%s.content[%d]", atMessage, j), before
		}
	}
	j := min(len(a.blocks), len(b.blocks))
	if j > 0 {
		before = a.blockEnds[j-1] - p.messages.start
	}
	return fmt.Sprintf("%s.content[%d]", atMessage, j), before
}

// neutralOpenAISettings are the top-level members of an OpenAI request that do not enter
// its prompt: delivery, storage, bookkeeping, sampling and output limits. A change in them
// leaves the cached prefix as it was (Codex sends a new client_metadata turn id every turn).
var neutralOpenAISettings = []string{"stream", "stream_options", "store", "include", "metadata", "client_metadata",
	"user", "safety_identifier", "background", "max_output_tokens", "max_completion_tokens", "max_tokens",
	"temperature", "top_p", "n", "seed", "logprobs", "top_logprobs", "logit_bias", "frequency_penalty",
	"presence_penalty", "stop"}

// parseForCompare validates one body, read as format, and builds the canonical pieces
// Compare needs.
func parseForCompare(data []byte, format Format) (*parsedBody, error) {
	p := &parsedBody{data: data, format: format, buf: make([]byte, 0, len(data)), array: "messages"}
	openAI := format != FormatMessages
	if format == FormatResponses {
		p.array = "input"
	}
	var c jsonscan.Canonicalizer
	i := jsonscan.SkipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		if err := jsonscan.CheckDocument(data); err != nil {
			return nil, syntaxError(err)
		}
		return nil, fmt.Errorf("%w: the body is not a JSON object", ErrUnsupportedFormat)
	}
	o, _ := jsonscan.OpenObject(data, i, 0)
	hasItems := false
	var topMarker bool
	// OpenAI bodies leave out prompt_cache_breakpoint markers everywhere; Anthropic ones
	// their cache_control markers, where the API reads them.
	var deep jsonscan.Flags
	if openAI {
		deep = jsonscan.SkipBreakpoints
	}
	for o.Next() {
		v := o.Value()
		switch {
		case o.KeyIs(p.array):
			if hasItems {
				return nil, fmt.Errorf("%w: %q appears twice", ErrUnsupportedFormat, p.array)
			}
			hasItems = true
			if format == FormatResponses && data[v] == '"' {
				end, err := p.stringItem(&c, v, o.Depth())
				if err != nil {
					return nil, err
				}
				o.Consumed(end)
				continue
			}
			if data[v] != '[' {
				return nil, fmt.Errorf("%w: %q is not an array", ErrUnsupportedFormat, p.array)
			}
			end, err := p.itemsArray(&c, v, o.Depth())
			if err != nil {
				return nil, err
			}
			o.Consumed(end)
			p.messages = span{v, end}
			continue
		case !openAI && o.KeyIs("cache_control"):
			m, end, err := readMarker(data, v, o.Depth())
			if err != nil {
				return nil, syntaxError(err)
			}
			o.Consumed(end)
			topMarker = m.present
			continue
		}
		name := string(jsonscan.AppendUnquoted(nil, o.Key()))
		if p.setting(name) != nil || findSetting(p.ignored, name) != nil {
			return nil, fmt.Errorf("%w: a top-level member appears twice", ErrUnsupportedFormat)
		}
		s := setting{name: name, array: data[v] == '['}
		flags := deep
		sec := SectionTools
		if name == "system" {
			sec = SectionSystem
		}
		if !openAI && (name == "tools" || name == "system") && s.array {
			flags = jsonscan.SkipCacheControl
		}
		start := len(p.buf)
		if s.array && (name == "tools" || name == "system" || name == "instructions") {
			a, _ := jsonscan.OpenArray(data, v, o.Depth())
			p.buf = append(p.buf, '[')
			for a.Next() {
				if a.Index() > 0 {
					p.buf = append(p.buf, ',')
				}
				es := len(p.buf)
				var end int
				var err error
				if p.buf, end, err = c.Append(p.buf, data, a.Value(), a.Depth(), flags); err != nil {
					return nil, syntaxError(err)
				}
				a.Consumed(end)
				s.elems = append(s.elems, span{es, len(p.buf)})
				if len(c.Skipped) > 0 {
					p.markers = append(p.markers, Location{Section: sec, Index: a.Index(), Block: -1, Sub: -1})
				}
				if c.Breakpoints > 0 && name == "instructions" {
					p.markers = append(p.markers, Location{Section: SectionInstructions, Index: -1, Block: -1, Sub: -1})
				}
			}
			if err := a.Err(); err != nil {
				return nil, syntaxError(err)
			}
			p.buf = append(p.buf, ']')
			o.Consumed(a.End())
			s.raw = span{v, a.End()}
		} else {
			var end int
			var err error
			if p.buf, end, err = c.Append(p.buf, data, v, o.Depth(), flags); err != nil {
				return nil, syntaxError(err)
			}
			o.Consumed(end)
			s.raw = span{v, end}
		}
		s.canon = span{start, len(p.buf)}
		if openAI && slices.Contains(neutralOpenAISettings, name) {
			p.ignored = append(p.ignored, s)
			continue
		}
		p.settings = append(p.settings, s)
	}
	if err := o.Err(); err != nil {
		return nil, syntaxError(err)
	}
	if k := jsonscan.SkipSpace(data, o.End()); k != len(data) {
		return nil, &SyntaxError{Offset: k, What: "unexpected data after the top-level value"}
	}
	if !hasItems {
		return nil, fmt.Errorf("%w: there is no %q member", ErrUnsupportedFormat, p.array)
	}
	if topMarker {
		p.markers = append([]Location{{Section: SectionTop, Index: -1, Block: -1, Sub: -1}}, p.markers...)
	}
	slices.SortStableFunc(p.markers, func(a, b Location) int {
		switch {
		case a.before(b):
			return -1
		case b.before(a):
			return 1
		}
		return 0
	})
	return p, nil
}

// stringItem reads a Responses input given as one string: one message of string content.
func (p *parsedBody) stringItem(c *jsonscan.Canonicalizer, v, depth int) (int, error) {
	p.stringInput = true
	bs := len(p.buf)
	var end int
	var err error
	if p.buf, end, err = c.Append(p.buf, p.data, v, depth, 0); err != nil {
		return 0, syntaxError(err)
	}
	p.msgs = append(p.msgs, parsedMsg{head: span{bs, bs}, stringContent: true, blocks: []span{{bs, len(p.buf)}}, rawStart: v, blockEnds: []int{end}})
	p.blocks = 1
	p.messages = span{v, end}
	return end, nil
}

// itemsArray reads the messages (or input items): each one's head (without its content),
// canonical, and its content blocks (or parts), canonical, leaving cache markers out.
func (p *parsedBody) itemsArray(c *jsonscan.Canonicalizer, v, depth int) (int, error) {
	d := p.data
	headFlags, blockFlags := jsonscan.SkipContent, jsonscan.SkipCacheControl|jsonscan.ContentBlocks
	section := SectionMessages
	if p.format != FormatMessages {
		headFlags, blockFlags = jsonscan.SkipContent|jsonscan.SkipBreakpoints, jsonscan.SkipBreakpoints
		section = SectionChat
		if p.format == FormatResponses {
			section = SectionInput
		}
	}
	a, _ := jsonscan.OpenArray(d, v, depth)
	for a.Next() {
		mi := a.Index()
		if d[a.Value()] != '{' {
			return 0, fmt.Errorf("%w: %s[%d] is not an object", ErrUnsupportedFormat, p.array, mi)
		}
		m := parsedMsg{rawStart: a.Value(), noContent: true}
		// The head: the message without its content, canonical.
		hs := len(p.buf)
		var end int
		var err error
		if p.buf, end, err = c.Append(p.buf, d, a.Value(), a.Depth(), headFlags); err != nil {
			return 0, syntaxError(err)
		}
		if c.Breakpoints > 0 { // on the item itself or in its output
			p.markers = append(p.markers, Location{Section: section, Index: mi, Block: -1, Sub: -1})
		}
		m.head = span{hs, len(p.buf)}
		a.Consumed(end)
		o, _ := jsonscan.OpenObject(d, a.Value(), a.Depth())
		for o.Next() {
			if !o.KeyIs("content") {
				continue
			}
			cv := o.Value()
			m.noContent = false
			switch d[cv] {
			case '[':
				blocks, _ := jsonscan.OpenArray(d, cv, o.Depth())
				for blocks.Next() {
					bs := len(p.buf)
					if p.buf, end, err = c.Append(p.buf, d, blocks.Value(), blocks.Depth(), blockFlags); err != nil {
						return 0, syntaxError(err)
					}
					blocks.Consumed(end)
					m.blocks = append(m.blocks, span{bs, len(p.buf)})
					m.blockEnds = append(m.blockEnds, end)
					if section != SectionMessages {
						if c.Breakpoints > 0 {
							p.markers = append(p.markers, Location{Section: section, Index: mi, Block: blocks.Index(), Sub: -1})
						}
						continue
					}
					for _, sub := range c.Skipped {
						p.markers = append(p.markers, Location{Section: SectionMessages, Index: mi, Block: blocks.Index(), Sub: sub})
					}
				}
				if err := blocks.Err(); err != nil {
					return 0, syntaxError(err)
				}
				o.Consumed(blocks.End())
			default:
				m.stringContent = d[cv] == '"'
				bs := len(p.buf)
				if p.buf, end, err = c.Append(p.buf, d, cv, o.Depth(), 0); err != nil {
					return 0, syntaxError(err)
				}
				o.Consumed(end)
				m.blocks = append(m.blocks, span{bs, len(p.buf)})
				m.blockEnds = append(m.blockEnds, end)
			}
		}
		if err := o.Err(); err != nil {
			return 0, syntaxError(err)
		}
		p.blocks += len(m.blocks)
		p.msgs = append(p.msgs, m)
	}
	if err := a.Err(); err != nil {
		return 0, syntaxError(err)
	}
	return a.End(), nil
}
