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
	// FirstChangedPath is the JSON path of the first change in render order: a request
	// setting ("model", "tools[2]", "system", "thinking"), or "messages[5]" (the message's
	// role or other fields, or a message missing from the current request),
	// "messages[5].content" or "messages[5].content[1]". Empty when nothing changed.
	FirstChangedPath string `json:"firstChangedPath,omitempty"`
	// ChangedSettings lists every top-level member other than messages that differs.
	ChangedSettings []string    `json:"changedSettings"`
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
	// CacheControlMoved: the two requests carry cache_control markers at different places.
	// Markers are not compared as content (they move every turn), only reported.
	CacheControlMoved bool      `json:"cacheControlMoved"`
	Recommendation    string    `json:"recommendation"`
	Warnings          []Warning `json:"warnings"`
	Note              string    `json:"note"`
}

// BodySummary describes one of the two requests.
type BodySummary struct {
	Bytes        int        `json:"bytes"`
	Messages     int        `json:"messages"`
	Blocks       int        `json:"blocks"`
	CacheControl []Location `json:"cacheControl"`
}

// CompareNote is the caveat every comparison carries.
const CompareNote = "a conservative content comparison (request settings significant, object member order ignored, cache_control markers left out), not proof of a provider cache hit"

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
	data     []byte
	buf      []byte
	settings []setting
	msgs     []parsedMsg
	markers  []Location
	messages span // raw
	blocks   int
}

// Compare compares two consecutive Messages request bodies, previous then current, and
// classifies the current one: unchanged, appended messages, appended blocks, or divergence.
// Both must be UTF-8 JSON objects with a messages array; a Responses-API-style body is
// refused with ErrResponsesAPI. Errors say which input was at fault and never quote it.
func Compare(previous, current []byte) (*Comparison, error) {
	prev, err := parseForCompare(previous)
	if err != nil {
		return nil, fmt.Errorf("previous request: %w", err)
	}
	cur, err := parseForCompare(current)
	if err != nil {
		return nil, fmt.Errorf("current request: %w", err)
	}
	c := &Comparison{
		ChangedSettings: []string{},
		Previous:        prev.summary(),
		Current:         cur.summary(),
		Warnings:        []Warning{},
		Note:            CompareNote,
	}
	c.CacheControlMoved = !slices.Equal(prev.markers, cur.markers)

	// Settings, in render order: model and tools, then system, then the rest by name.
	firstSetting := ""
	var toolsBytes, systemBytes int
	changed := map[string]bool{}
	for _, name := range settingOrder(prev, cur) {
		ps, cs := prev.setting(name), cur.setting(name)
		if name == "tools" && ps != nil {
			toolsBytes = ps.raw.end - ps.raw.start
		}
		if name == "system" && ps != nil {
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

	// Messages.
	n := min(len(prev.msgs), len(cur.msgs))
	k := 0
	for k < n && prev.msgEqual(cur, k, k) {
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
	c.advise(prev, cur)
	return c, nil
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

// settingOrder lists the top-level members of either body other than messages and
// cache_control: model, tools and system first (render order), then the rest by name.
func settingOrder(a, b *parsedBody) []string {
	var names []string
	for _, p := range [2]*parsedBody{a, b} {
		for _, s := range p.settings {
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
		case "system":
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
	if !ps.array || !cs.array || (name != "tools" && name != "system") {
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

func (p *parsedBody) setting(name string) *setting {
	for i := range p.settings {
		if p.settings[i].name == name {
			return &p.settings[i]
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
	atMessage := fmt.Sprintf("messages[%d]", k)
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

// parseForCompare validates one body and builds the canonical pieces Compare needs.
func parseForCompare(data []byte) (*parsedBody, error) {
	if !utf8.Valid(data) {
		return nil, ErrNotUTF8
	}
	p := &parsedBody{data: data, buf: make([]byte, 0, len(data))}
	var c jsonscan.Canonicalizer
	i := jsonscan.SkipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		if err := jsonscan.CheckDocument(data); err != nil {
			return nil, syntaxError(err)
		}
		return nil, fmt.Errorf("%w: the body is not a JSON object", ErrUnsupportedFormat)
	}
	o, _ := jsonscan.OpenObject(data, i, 0)
	hasMessages, hasInput := false, false
	var topMarker bool
	for o.Next() {
		v := o.Value()
		switch {
		case o.KeyIs("messages"):
			if hasMessages {
				return nil, fmt.Errorf("%w: \"messages\" appears twice", ErrUnsupportedFormat)
			}
			hasMessages = true
			if data[v] != '[' {
				return nil, fmt.Errorf("%w: \"messages\" is not an array", ErrUnsupportedFormat)
			}
			end, err := p.messagesArray(&c, v, o.Depth())
			if err != nil {
				return nil, err
			}
			o.Consumed(end)
			p.messages = span{v, end}
			continue
		case o.KeyIs("cache_control"):
			m, end, err := readMarker(data, v, o.Depth())
			if err != nil {
				return nil, syntaxError(err)
			}
			o.Consumed(end)
			topMarker = m.present
			continue
		case o.KeyIs("input"):
			hasInput = true
		}
		name := string(jsonscan.AppendUnquoted(nil, o.Key()))
		if p.setting(name) != nil {
			return nil, fmt.Errorf("%w: a top-level member appears twice", ErrUnsupportedFormat)
		}
		s := setting{name: name, array: data[v] == '['}
		var flags jsonscan.Flags
		sec := SectionTools
		if name == "system" {
			sec = SectionSystem
		}
		if (name == "tools" || name == "system") && s.array {
			flags = jsonscan.SkipCacheControl
		}
		start := len(p.buf)
		if s.array && flags != 0 {
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
			if p.buf, end, err = c.Append(p.buf, data, v, o.Depth(), 0); err != nil {
				return nil, syntaxError(err)
			}
			o.Consumed(end)
			s.raw = span{v, end}
		}
		s.canon = span{start, len(p.buf)}
		p.settings = append(p.settings, s)
	}
	if err := o.Err(); err != nil {
		return nil, syntaxError(err)
	}
	if k := jsonscan.SkipSpace(data, o.End()); k != len(data) {
		return nil, &SyntaxError{Offset: k, What: "unexpected data after the top-level value"}
	}
	if !hasMessages {
		if hasInput {
			return nil, ErrResponsesAPI
		}
		return nil, fmt.Errorf("%w: there is no \"messages\" array", ErrUnsupportedFormat)
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

func (p *parsedBody) messagesArray(c *jsonscan.Canonicalizer, v, depth int) (int, error) {
	d := p.data
	a, _ := jsonscan.OpenArray(d, v, depth)
	for a.Next() {
		mi := a.Index()
		if d[a.Value()] != '{' {
			return 0, fmt.Errorf("%w: messages[%d] is not an object", ErrUnsupportedFormat, mi)
		}
		m := parsedMsg{rawStart: a.Value(), noContent: true}
		// The head: the message without its content, canonical.
		hs := len(p.buf)
		var end int
		var err error
		if p.buf, end, err = c.Append(p.buf, d, a.Value(), a.Depth(), jsonscan.SkipContent); err != nil {
			return 0, syntaxError(err)
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
					if p.buf, end, err = c.Append(p.buf, d, blocks.Value(), blocks.Depth(), jsonscan.SkipCacheControl|jsonscan.ContentBlocks); err != nil {
						return 0, syntaxError(err)
					}
					blocks.Consumed(end)
					m.blocks = append(m.blocks, span{bs, len(p.buf)})
					m.blockEnds = append(m.blockEnds, end)
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
