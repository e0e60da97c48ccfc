package cacheplan

import (
	"fmt"
	"slices"
	"sync"

	"github.com/agent-rewind/rewind/internal/jsonscan"
)

// Decision is what the planner decided for one request body.
type Decision string

// The planner's decisions. Only DecisionInsert changes the body.
const (
	DecisionInsert           Decision = "insert"             // markers planned: Apply splices them in
	DecisionClientSupplied   Decision = "client-supplied"    // the client set cache_control somewhere: left as it is
	DecisionNoCacheableBlock Decision = "no-cacheable-block" // nothing in the request can carry a marker
	DecisionUnsupported      Decision = "unsupported-format" // not an Anthropic Messages body: left as it is
	DecisionAmbiguous        Decision = "ambiguous"          // a member the planner (or the OpenAI report) reads appears twice: left as it is
	DecisionBelowMinimum     Decision = "below-minimum"      // the prefix is too short for the model to cache: left as it is
	DecisionAutomatic        Decision = "automatic"          // OpenAI: the provider caches the prefix by itself, no marker to place
)

// Role says why a breakpoint is where it is.
type Role string

// The roles of breakpoints.
const (
	RoleTail   Role = "tail"   // the end of the stable prefix: the request's last cacheable block
	RoleBridge Role = "bridge" // within the lookback window after the previous request's end
	RoleClient Role = "client" // supplied by the client
)

// Options tune the planner.
type Options struct {
	// TTL of the planned markers: "" or "5m" (the provider's default, written without a ttl
	// field, so the marker is the shortest possible) or "1h".
	TTL TTL
	// MinimumTokens is the model's minimum cacheable prefix length in tokens, for a caller
	// that knows it better than MinimumCacheableTokens (a model the table does not know, or
	// one whose minimum changed); 0 means the table's value. Anthropic Messages only.
	MinimumTokens int
	// Format is the API the body is for when the caller knows it; empty means detect it from
	// the body's shape. Responses and Chat Completions bodies get a report on OpenAI's
	// automatic caching (Plan.PrefixCaching) and are never changed.
	Format Format
}

// Breakpoint is one cache_control marker, planned or found.
type Breakpoint struct {
	Location Location `json:"location"`
	Role     Role     `json:"role"`
	TTL      TTL      `json:"ttl"`
	// PrefixBytes is the size of the request JSON the marker caches (tools, system and
	// messages up to and including the marked block); EstimatedPrefixTokens is PrefixBytes/4.
	// Both are zero for client markers.
	PrefixBytes           int `json:"prefixBytes,omitempty"`
	EstimatedPrefixTokens int `json:"estimatedPrefixTokens,omitempty"`

	start, end int  // where the marker goes: before data[end-1] == '}', or around data[start:end]
	wrap       bool // the target is a string: wrap it in a text block that carries the marker
}

// Counts are the sizes of a request's sections.
type Counts struct {
	Tools         int `json:"tools"`
	SystemBlocks  int `json:"systemBlocks"`
	Messages      int `json:"messages"`
	MessageBlocks int `json:"messageBlocks"`
}

// Warning is a finding worth a person's attention; Code is stable, Message is readable.
type Warning struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Plan is the planner's result for one body. It never holds body text: only decisions,
// locations and sizes.
type Plan struct {
	Decision Decision `json:"decision"`
	Format   Format   `json:"format"`
	// Detection says how Format was decided; empty for FormatOther.
	Detection Detection `json:"formatDetection,omitempty"`
	Reason    string    `json:"reason"`
	// Breakpoints are the planned markers, in body order (DecisionInsert only).
	Breakpoints []Breakpoint `json:"breakpoints"`
	// Existing are the client's markers, in render order.
	Existing []Breakpoint `json:"existing"`
	// AutomaticCaching: the provider places the breakpoint itself: the body has a top-level
	// cache_control (Anthropic), or is an OpenAI body not in prompt_cache_options' explicit
	// mode.
	AutomaticCaching bool   `json:"automaticCaching"`
	Counts           Counts `json:"counts"`
	// PrefixBytes and EstimatedPrefixTokens size the prefix the tail breakpoint caches.
	PrefixBytes           int `json:"prefixBytes"`
	EstimatedPrefixTokens int `json:"estimatedPrefixTokens"`
	// ModelFamily and MinimumTokens come from the minimum-length table (MinimumTokens from
	// Options when given there); MinimumTokens is 0 when the model is not in the table.
	// BelowMinimum: the estimate is under the minimum, so the provider will probably not cache
	// this prefix. A prefix that cannot reach the minimum even at DenseBytesPerToken bytes a
	// token gets no marker (DecisionBelowMinimum); one between that and the estimate gets its
	// marker and a below-minimum warning, as the estimate is rough.
	ModelFamily   string    `json:"modelFamily,omitempty"`
	MinimumTokens int       `json:"minimumTokens,omitempty"`
	BelowMinimum  bool      `json:"belowMinimum"`
	Warnings      []Warning `json:"warnings"`
	TTL           TTL       `json:"ttl,omitempty"` // of planned markers (Anthropic)
	// PrefixCaching reports on OpenAI's automatic prefix caching, for a Responses or Chat
	// Completions body; nil otherwise.
	PrefixCaching *PrefixCaching `json:"prefixCaching,omitempty"`

	bodyLen int
	extra   int
	bp      [2]Breakpoint
}

// Marker bytes spliced into bodies. The 5m form omits the ttl field: it is the default.
const (
	marker5m  = `,"cache_control":{"type":"ephemeral"}`
	marker1h  = `,"cache_control":{"type":"ephemeral","ttl":"1h"}`
	wrapOpen  = `[{"type":"text","text":`
	wrapClose = `}]`
)

func (t TTL) marker() string {
	if t == TTL1h {
		return marker1h
	}
	return marker5m
}

// cand is a block that can take a marker.
type cand struct {
	loc        Location
	global     int // index among all message blocks; -1 outside messages
	start, end int
	wrap       bool
}

type msgInfo struct {
	user, assistant bool // for a Responses item, assistant is any output of the model
	first, count    int  // global index of the first block, number of blocks
	end             int  // offset just past the message or item
}

type planScratch struct {
	cands   []cand
	msgs    []msgInfo
	nested  []nestedMarker
	items   []msgInfo    // Responses input items
	oaMarks []Breakpoint // OpenAI prompt_cache_breakpoint markers
}

var scratchPool = sync.Pool{New: func() any { return new(planScratch) }}

type planner struct {
	data        []byte
	p           *Plan
	s           *planScratch
	marks       shape
	oa          openaiScan
	unsupported bool
	dup         bool
	tool, sys   cand
	hasTool     bool
	hasSys      bool
	blocks      int
}

// PlanRequest plans cache breakpoints for an Anthropic Messages request body. It reads body
// and never changes it; Plan.Apply makes the planned body. The only error is for a body that
// is not valid JSON (ErrInvalidJSON) or a bad Options.TTL (ErrInvalidTTL); every other body
// gets a Plan whose Decision says what, if anything, to do.
//
// The rule: if the client supplied cache_control anywhere (a top-level one included), leave
// the body alone. Otherwise put one marker on the last cacheable block (messages, else
// system, else tools): the end of the stable prefix, which the next request of an agent loop
// repeats. If that block is more than LookbackBlocks blocks past the previous request's end,
// add a bridge marker within the window so this request still reads the previous entry.
func PlanRequest(body []byte, opts Options) (*Plan, error) {
	ttl := opts.TTL
	switch ttl {
	case "":
		ttl = TTL5m
	case TTL5m, TTL1h:
	default:
		return nil, fmt.Errorf("%w (got %d bytes)", ErrInvalidTTL, len(opts.TTL))
	}
	p := &Plan{TTL: ttl, bodyLen: len(body)}
	s := scratchPool.Get().(*planScratch)
	defer scratchPool.Put(s)
	s.cands, s.msgs, s.nested, s.items, s.oaMarks = s.cands[:0], s.msgs[:0], s.nested[:0], s.items[:0], s.oaMarks[:0]
	w := planner{data: body, p: p, s: s}

	top, err := readTop(body, w.visit)
	if err != nil {
		return nil, err
	}
	w.marks.anthropic = w.marks.anthropic || top.shape.anthropic
	w.marks.chat = w.marks.chat || top.shape.chat
	var why string
	p.Format, p.Detection, why = resolveFormat(&top, w.marks, opts.Format)
	if p.Format == FormatMessages && w.unsupported {
		p.Format, p.Detection, why = FormatOther, "", "a tools, system, message or content value has a type Anthropic Messages does not accept"
	}
	if top.model != 0 {
		tok := body[top.model:top.modelEnd]
		if !top.modelEscaped {
			p.MinimumTokens, p.ModelFamily, _ = MinimumCacheableTokens(string(tok[1 : len(tok)-1]))
		}
	}
	if p.Format == FormatResponses || p.Format == FormatOpenAIChat {
		p.ModelFamily, p.MinimumTokens = "", 0
		w.decideOpenAI(&top)
		return p, nil
	}
	if opts.MinimumTokens > 0 {
		p.MinimumTokens = opts.MinimumTokens
	}
	if top.cc.present {
		p.AutomaticCaching = true
		p.Existing = append(p.Existing, Breakpoint{Location: Location{Section: SectionTop, Index: -1, Block: -1, Sub: -1}, Role: RoleClient, TTL: top.cc.ttl})
		if top.cc.badTTL {
			p.warn("ttl-invalid", "the top-level cache_control has a ttl other than \"5m\" or \"1h\"; the API rejects it")
		}
	}
	switch {
	case p.Format != FormatMessages:
		p.Decision = DecisionUnsupported
		p.Reason = unsupportedReason(why) + "; left unchanged"
	case top.dup || w.dup:
		p.Decision = DecisionAmbiguous
		p.Reason = "a member the planner reads (tools, system, messages, model, cache_control, or a block's type, text or cache_control) appears twice; left unchanged"
	case len(p.Existing) > 0:
		p.Decision = DecisionClientSupplied
		p.Reason = "the client supplied cache_control; left unchanged"
		w.checkExisting()
	default:
		w.decide(&top)
	}
	return p, nil
}

func (p *Plan) warn(code, msg string) { p.Warnings = append(p.Warnings, Warning{code, msg}) }

// visit walks the sections the planner cares about as readTop meets them.
func (w *planner) visit(k topKey, o *jsonscan.Object) error {
	var err error
	switch k {
	case keyTools:
		err = w.tools(o)
	case keySystem:
		err = w.system(o)
	case keyMessages:
		err = w.messages(o)
	case keyInput:
		err = w.input(o)
	case keyOther:
		err = w.openAITop(o)
	}
	if err != nil {
		return syntaxError(err)
	}
	return nil
}

func (w *planner) addExisting(loc Location, m marker) {
	w.p.Existing = append(w.p.Existing, Breakpoint{Location: loc, Role: RoleClient, TTL: m.ttl})
	if m.badTTL {
		w.p.warn("ttl-invalid", "the cache_control at "+loc.String()+" has a ttl other than \"5m\" or \"1h\"; the API rejects it")
	}
}

func (w *planner) tools(o *jsonscan.Object) error {
	d := w.data
	if d[o.Value()] != '[' {
		w.unsupported = true
		return nil
	}
	a, err := jsonscan.OpenArray(d, o.Value(), o.Depth())
	if err != nil {
		return err
	}
	for a.Next() {
		w.p.Counts.Tools++
		if d[a.Value()] != '{' {
			continue
		}
		b, err := readBlock(d, a.Value(), a.Depth(), w.s.nested)
		if err != nil {
			return err
		}
		a.Consumed(b.end)
		loc := Location{Section: SectionTools, Index: a.Index(), Block: -1, Sub: -1}
		if b.cc.present {
			w.addExisting(loc, b.cc)
		}
		w.dup = w.dup || b.dup
		w.marks.anthropic = w.marks.anthropic || b.marks.anthropic
		w.marks.chat = w.marks.chat || b.marks.chat
		if !b.cc.present && !b.cc.null && !b.dup && b.members > 0 {
			w.tool, w.hasTool = cand{loc: loc, global: -1, start: b.start, end: b.end}, true
		}
	}
	if err := a.Err(); err != nil {
		return err
	}
	o.Consumed(a.End())
	return nil
}

func (w *planner) system(o *jsonscan.Object) error {
	d := w.data
	v := o.Value()
	switch d[v] {
	case '"':
		end, _, err := jsonscan.ScanString(d, v)
		if err != nil {
			return err
		}
		o.Consumed(end)
		w.p.Counts.SystemBlocks = 1
		if end-v > 2 {
			w.sys, w.hasSys = cand{loc: Location{Section: SectionSystem, Index: -1, Block: -1, Sub: -1}, global: -1, start: v, end: end, wrap: true}, true
		}
		return nil
	case '[':
	default:
		w.unsupported = true
		return nil
	}
	a, err := jsonscan.OpenArray(d, v, o.Depth())
	if err != nil {
		return err
	}
	for a.Next() {
		w.p.Counts.SystemBlocks++
		if d[a.Value()] != '{' {
			continue
		}
		b, err := readBlock(d, a.Value(), a.Depth(), w.s.nested)
		if err != nil {
			return err
		}
		a.Consumed(b.end)
		loc := Location{Section: SectionSystem, Index: a.Index(), Block: -1, Sub: -1}
		if b.cc.present {
			w.addExisting(loc, b.cc)
		}
		w.dup = w.dup || b.dup
		w.marks.anthropic = w.marks.anthropic || b.marks.anthropic
		w.marks.chat = w.marks.chat || b.marks.chat
		if b.cacheable() {
			w.sys, w.hasSys = cand{loc: loc, global: -1, start: b.start, end: b.end}, true
		}
	}
	if err := a.Err(); err != nil {
		return err
	}
	o.Consumed(a.End())
	return nil
}

func (w *planner) messages(o *jsonscan.Object) error {
	d := w.data
	if d[o.Value()] != '[' {
		return nil // readTop's format check reports it
	}
	a, err := jsonscan.OpenArray(d, o.Value(), o.Depth())
	if err != nil {
		return err
	}
	for a.Next() {
		mi := a.Index()
		w.p.Counts.Messages++
		info := msgInfo{first: w.blocks}
		if d[a.Value()] != '{' {
			w.unsupported = true
			w.s.msgs = append(w.s.msgs, info)
			continue
		}
		m, err := jsonscan.OpenObject(d, a.Value(), a.Depth())
		if err != nil {
			return err
		}
		seenRole, seenContent := false, false
		for m.Next() {
			v := m.Value()
			switch {
			case m.KeyIs("role"):
				w.dup = w.dup || seenRole
				seenRole = true
				if d[v] != '"' {
					continue
				}
				end, esc, err := jsonscan.ScanString(d, v)
				if err != nil {
					return err
				}
				m.Consumed(end)
				tok := d[v:end]
				info.user = jsonscan.StringIs(tok, esc, "user")
				info.assistant = jsonscan.StringIs(tok, esc, "assistant")
				w.marks.role(tok, esc)
			case m.KeyIs("content"):
				w.dup = w.dup || seenContent
				seenContent = true
				end, err := w.content(mi, v, m.Depth())
				if err != nil {
					return err
				}
				m.Consumed(end)
			default:
				w.marks.messageKey(&m)
			}
		}
		if err := m.Err(); err != nil {
			return err
		}
		a.Consumed(m.End())
		info.count = w.blocks - info.first
		info.end = m.End()
		w.s.msgs = append(w.s.msgs, info)
	}
	if err := a.Err(); err != nil {
		return err
	}
	o.Consumed(a.End())
	return nil
}

// content walks one message's content and returns the offset just past it.
func (w *planner) content(mi, v, depth int) (int, error) {
	d := w.data
	switch d[v] {
	case '"':
		end, _, err := jsonscan.ScanString(d, v)
		if err != nil {
			return end, err
		}
		if end-v > 2 {
			w.s.cands = append(w.s.cands, cand{loc: Location{Section: SectionMessages, Index: mi, Block: -1, Sub: -1}, global: w.blocks, start: v, end: end, wrap: true})
		}
		w.blocks++
		w.p.Counts.MessageBlocks++
		return end, nil
	case '[':
	default:
		w.unsupported = true
		return jsonscan.SkipValue(d, v, depth)
	}
	a, err := jsonscan.OpenArray(d, v, depth)
	if err != nil {
		return v, err
	}
	for a.Next() {
		bi := a.Index()
		loc := Location{Section: SectionMessages, Index: mi, Block: bi, Sub: -1}
		global := w.blocks
		w.blocks++
		w.p.Counts.MessageBlocks++
		if d[a.Value()] != '{' {
			continue
		}
		b, err := readBlock(d, a.Value(), a.Depth(), w.s.nested)
		if err != nil {
			return v, err
		}
		w.s.nested = b.nested[:0]
		a.Consumed(b.end)
		if b.cc.present {
			w.addExisting(loc, b.cc)
		}
		for _, n := range b.nested {
			w.addExisting(Location{Section: SectionMessages, Index: mi, Block: bi, Sub: n.sub}, n.cc)
		}
		if b.breakpoint {
			w.s.oaMarks = append(w.s.oaMarks, Breakpoint{Location: Location{Section: SectionChat, Index: mi, Block: bi, Sub: -1}, Role: RoleClient, TTL: OpenAIBreakpointTTL})
		}
		w.dup = w.dup || b.dup
		w.marks.anthropic = w.marks.anthropic || b.marks.anthropic
		w.marks.chat = w.marks.chat || b.marks.chat
		if b.cacheable() {
			w.s.cands = append(w.s.cands, cand{loc: loc, global: global, start: b.start, end: b.end})
		}
	}
	if err := a.Err(); err != nil {
		return v, err
	}
	return a.End(), nil
}

// checkExisting looks at client markers for what the API would reject.
func (w *planner) checkExisting() {
	p := w.p
	slices.SortStableFunc(p.Existing, func(a, b Breakpoint) int {
		switch {
		case a.Location.before(b.Location):
			return -1
		case b.Location.before(a.Location):
			return 1
		}
		return 0
	})
	explicit := 0
	var prev TTL
	for _, e := range p.Existing {
		if e.Location.Section == SectionTop {
			continue
		}
		explicit++
		if prev != "" && e.TTL.rank() > prev.rank() {
			p.warn("ttl-order", fmt.Sprintf("a %s marker at %s follows a shorter-lived one; longer TTLs must come before shorter ones (tools, then system, then messages), or the API rejects the request", e.TTL, e.Location))
		}
		prev = e.TTL
	}
	if explicit > MaxBreakpoints {
		p.warn("over-limit", fmt.Sprintf("%d explicit cache_control markers; the API allows %d per request", explicit, MaxBreakpoints))
	}
	if p.AutomaticCaching && explicit >= MaxBreakpoints {
		p.warn("over-limit", fmt.Sprintf("automatic caching (top-level cache_control) with %d explicit markers: the automatic breakpoint needs a slot of the %d", explicit, MaxBreakpoints))
	}
}

// decide places the tail marker and, if needed, a bridge.
func (w *planner) decide(top *topLevel) {
	p := w.p
	var tail cand
	switch {
	case len(w.s.cands) > 0:
		tail = w.s.cands[len(w.s.cands)-1]
	case w.hasSys:
		tail = w.sys
	case w.hasTool:
		tail = w.tool
	default:
		p.Decision = DecisionNoCacheableBlock
		p.Reason = "no block can carry a cache_control marker (no tools, no non-empty system prompt, no cacheable message block)"
		return
	}
	tb := w.breakpoint(top, tail, RoleTail)
	p.PrefixBytes, p.EstimatedPrefixTokens = tb.PrefixBytes, tb.EstimatedPrefixTokens
	if p.MinimumTokens > 0 && p.EstimatedPrefixTokens < p.MinimumTokens {
		p.BelowMinimum = true
	}
	if !p.canCache(tb) {
		p.Decision = DecisionBelowMinimum
		p.Reason = fmt.Sprintf("no client cache_control, and the prefix up to %s (%d bytes, about %d tokens) cannot reach the %d-token minimum for %s: a marker would have no effect; left unchanged",
			tail.loc, p.PrefixBytes, p.EstimatedPrefixTokens, p.MinimumTokens, p.minimumOf())
		return
	}
	p.Decision = DecisionInsert
	p.Reason = "no client cache_control; one marker at the end of the stable prefix (" + tail.loc.String() + ")"
	p.Breakpoints = p.bp[:0]

	// The previous request of an agent loop ended with the user message before the last
	// assistant turn; its tail marker was on that message's last block.
	if n := len(w.s.msgs); tail.global >= 0 && n >= 3 && w.s.msgs[n-1].user && w.s.msgs[n-2].assistant {
		prev := w.s.msgs[n-3]
		prevEnd := prev.first + prev.count - 1
		if prev.count > 0 && tail.global-prevEnd > LookbackBlocks {
			bridge, ok := w.bridge(prevEnd, tail.global)
			switch bb := w.breakpoint(top, bridge, RoleBridge); {
			case !ok:
				p.warn("lookback-gap", fmt.Sprintf("the tail is %d blocks past the previous request's end, beyond the %d-block lookback, and no block in the window can carry a bridge marker: this request will rewrite the cached prefix", tail.global-prevEnd, LookbackBlocks))
			case p.canCache(bb):
				p.Breakpoints = append(p.Breakpoints, bb)
				p.Reason += fmt.Sprintf(", and a bridge at %s: the tail is %d blocks past the previous request's end, beyond the %d-block lookback", bridge.loc, tail.global-prevEnd, LookbackBlocks)
			}
			// A bridge too short to cache is left out: the previous request's prefix, shorter
			// still, was not cached either, so there is nothing to bridge to.
		}
	}
	p.Breakpoints = append(p.Breakpoints, tb)
	if p.BelowMinimum {
		p.warn("below-minimum", fmt.Sprintf("the estimated prefix (%d tokens) is under the %d-token minimum for %s: the provider will probably not cache it yet", p.EstimatedPrefixTokens, p.MinimumTokens, p.minimumOf()))
	}
	p.extra = 0
	for _, b := range p.Breakpoints {
		p.extra += len(p.TTL.marker())
		if b.wrap {
			p.extra += len(wrapOpen) + len(wrapClose)
		}
	}
}

// canCache reports whether a marker at b can take effect: the model's minimum is unknown, or
// b's prefix reaches it at DenseBytesPerToken bytes a token.
func (p *Plan) canCache(b Breakpoint) bool {
	return p.MinimumTokens <= 0 || b.PrefixBytes >= p.MinimumTokens*DenseBytesPerToken
}

// minimumOf names where the minimum comes from, for reasons.
func (p *Plan) minimumOf() string {
	if p.ModelFamily != "" {
		return p.ModelFamily
	}
	return "the model"
}

// bridge finds the last cacheable message block within the lookback window after prevEnd.
func (w *planner) bridge(prevEnd, tail int) (cand, bool) {
	limit := prevEnd + LookbackBlocks
	for k := len(w.s.cands) - 1; k >= 0; k-- {
		c := w.s.cands[k]
		if c.global <= prevEnd {
			break
		}
		if c.global <= limit && c.global < tail {
			return c, true
		}
	}
	return cand{}, false
}

func (w *planner) breakpoint(top *topLevel, c cand, role Role) Breakpoint {
	var size int
	switch c.loc.Section {
	case SectionTools:
		size = c.end - top.tools
	case SectionSystem:
		size = c.end - top.system
		if top.tools != 0 {
			size += top.toolsEnd - top.tools
		}
	case SectionMessages:
		size = c.end - top.messages
		if top.tools != 0 {
			size += top.toolsEnd - top.tools
		}
		if top.system != 0 {
			size += top.systemEnd - top.system
		}
	}
	return Breakpoint{Location: c.loc, Role: role, TTL: w.p.TTL, PrefixBytes: size, EstimatedPrefixTokens: EstimateTokens(size), start: c.start, end: c.end, wrap: c.wrap}
}

// Apply returns the body with the planned markers spliced in: every other byte is the
// body's own, in order. With nothing planned it returns body itself. body must be the bytes
// the plan was made from (Apply panics on a length mismatch: a programming error).
func (p *Plan) Apply(body []byte) []byte {
	if p.Decision != DecisionInsert || len(p.Breakpoints) == 0 {
		return body
	}
	if len(body) != p.bodyLen {
		panic(fmt.Sprintf("cacheplan: Plan.Apply on a body of %d bytes, planned for %d", len(body), p.bodyLen))
	}
	return p.AppendApply(make([]byte, 0, len(body)+p.extra), body)
}

// AppendApply appends the planned body to dst, for callers that reuse buffers.
func (p *Plan) AppendApply(dst, body []byte) []byte {
	if p.Decision != DecisionInsert || len(p.Breakpoints) == 0 {
		return append(dst, body...)
	}
	mk := p.TTL.marker()
	last := 0
	for _, b := range p.Breakpoints { // body order: a bridge precedes the tail
		if b.wrap {
			dst = append(dst, body[last:b.start]...)
			dst = append(dst, wrapOpen...)
			dst = append(dst, body[b.start:b.end]...)
			dst = append(dst, mk...)
			dst = append(dst, wrapClose...)
			last = b.end
			continue
		}
		dst = append(dst, body[last:b.end-1]...)
		dst = append(dst, mk...)
		last = b.end - 1
	}
	return append(dst, body[last:]...)
}

// Preserve plans and applies in one call, the gateway's cache-preservation step: it returns
// the body to forward (body itself unless markers were added) and the plan. On
// ErrInvalidJSON it returns body unchanged with the error, so the caller can forward it as
// the client sent it.
func Preserve(body []byte, opts Options) ([]byte, *Plan, error) {
	p, err := PlanRequest(body, opts)
	if err != nil {
		return body, nil, err
	}
	return p.Apply(body), p, nil
}
