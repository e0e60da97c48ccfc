package analyze

import (
	"github.com/agent-rewind/rewind/internal/jsonscan"
)

// str is a JSON string token in the record: its raw bytes (quotes included) and whether it
// holds escapes.
type str struct {
	start, end int
	escaped    bool
}

func (s str) present() bool { return s.end != 0 }

// usage holds one record's token counts, each under its own member name: which of them
// count is the record's API's choice (tokensOf). reasoning is set by tokensOf only.
type usage struct {
	input, output, cacheCreation, cacheRead int64 // input_tokens, output_tokens, Anthropic's cache counts
	prompt, completion                      int64 // Chat Completions' prompt_tokens, completion_tokens
	inputCached, promptCached               int64 // {input,prompt}_tokens_details.cached_tokens
	outputReasoning, completionReasoning    int64 // {output,completion}_tokens_details.reasoning_tokens
	reasoning                               int64
}

// countField is a token count a usage object (or one of its *_details objects) may hold.
type countField struct {
	name string
	dst  func(*usage) *int64
}

// usageFields are the counts of a usage object; usageDetails the counts of its details
// objects, by the object's name.
var (
	usageFields = []countField{
		{"input_tokens", func(u *usage) *int64 { return &u.input }},
		{"output_tokens", func(u *usage) *int64 { return &u.output }},
		{"cache_creation_input_tokens", func(u *usage) *int64 { return &u.cacheCreation }},
		{"cache_read_input_tokens", func(u *usage) *int64 { return &u.cacheRead }},
		{"prompt_tokens", func(u *usage) *int64 { return &u.prompt }},
		{"completion_tokens", func(u *usage) *int64 { return &u.completion }},
	}
	usageDetails = []struct {
		name   string
		fields []countField
	}{
		{"input_tokens_details", []countField{{"cached_tokens", func(u *usage) *int64 { return &u.inputCached }}}},
		{"prompt_tokens_details", []countField{{"cached_tokens", func(u *usage) *int64 { return &u.promptCached }}}},
		{"output_tokens_details", []countField{{"reasoning_tokens", func(u *usage) *int64 { return &u.outputReasoning }}}},
		{"completion_tokens_details", []countField{{"reasoning_tokens", func(u *usage) *int64 { return &u.completionReasoning }}}},
	}
)

// record is one parsed capture record: positions in the record's bytes and parsed numbers. It
// holds no copies of the input.
type record struct {
	method, origin, path, scope str
	headers                     int // offset of the headers object, 0 when absent
	body                        int // offset of the body value, 0 when absent
	bodyEnd                     int
	bodySHA                     [32]byte
	hasBodySHA                  bool
	usage                       usage
	hasUsage                    bool
	status                      int64
	hasStatus                   bool
}

// parseRecord validates one record and records where its members are. The body's canonical
// form is appended to canon (validating it in the same pass). A non-nil reason is a fixed
// description of what is wrong; tokenErr says it is about a token count.
func parseRecord(data []byte, c *jsonscan.Canonicalizer, canon []byte, maxTokens int64) (rec record, out []byte, reason string, tokenErr bool) {
	out = canon
	i := jsonscan.SkipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		if jsonscan.Valid(data) {
			return rec, out, "the record is not a JSON object", false
		}
		return rec, out, "the record is not valid JSON", false
	}
	o, err := jsonscan.OpenObject(data, i, 0)
	if err != nil {
		return rec, out, "the record is not valid JSON", false
	}
	seen := 0 // bit set of members read, to refuse duplicates
	const (
		mMethod = 1 << iota
		mOrigin
		mPath
		mHeaders
		mBody
		mBodySHA
		mUsage
		mScope
		mStatus
	)
	dup := func(bit int) bool {
		d := seen&bit != 0
		seen |= bit
		return d
	}
	readStr := func(dst *str) string {
		v := o.Value()
		if data[v] != '"' {
			return "a member that must be a string is not one"
		}
		end, esc, err := jsonscan.ScanString(data, v)
		if err != nil {
			return "the record is not valid JSON"
		}
		o.Consumed(end)
		*dst = str{v, end, esc}
		return ""
	}
	for o.Next() {
		v := o.Value()
		var r string
		switch {
		case o.KeyIs("method"):
			if dup(mMethod) {
				return rec, out, "a member appears twice", false
			}
			r = readStr(&rec.method)
		case o.KeyIs("origin"):
			if dup(mOrigin) {
				return rec, out, "a member appears twice", false
			}
			r = readStr(&rec.origin)
		case o.KeyIs("path"):
			if dup(mPath) {
				return rec, out, "a member appears twice", false
			}
			r = readStr(&rec.path)
		case o.KeyIs("scope"):
			if dup(mScope) {
				return rec, out, "a member appears twice", false
			}
			r = readStr(&rec.scope)
		case o.KeyIs("headers"):
			if dup(mHeaders) {
				return rec, out, "a member appears twice", false
			}
			if data[v] == 'n' {
				continue
			}
			if data[v] != '{' {
				return rec, out, "headers is not an object", false
			}
			end, ok := checkHeaders(data, v)
			if !ok {
				return rec, out, "headers is not an object of strings", false
			}
			o.Consumed(end)
			rec.headers = v
		case o.KeyIs("body"):
			if dup(mBody) {
				return rec, out, "a member appears twice", false
			}
			var end int
			out, end, err = c.Append(out[:0], data, v, o.Depth(), 0)
			if err != nil {
				return rec, out, "the record is not valid JSON", false
			}
			o.Consumed(end)
			rec.body, rec.bodyEnd = v, end
		case o.KeyIs("bodySha256"):
			if dup(mBodySHA) {
				return rec, out, "a member appears twice", false
			}
			var s str
			if r = readStr(&s); r == "" {
				if !parseHexDigest(data[s.start+1:s.end-1], &rec.bodySHA) {
					return rec, out, "bodySha256 is not 64 lowercase hexadecimal digits", false
				}
				rec.hasBodySHA = true
			}
		case o.KeyIs("usage"):
			if dup(mUsage) {
				return rec, out, "a member appears twice", false
			}
			if data[v] == 'n' {
				continue
			}
			end, reason, tok := parseUsage(data, v, o.Depth(), maxTokens, &rec.usage)
			if reason != "" {
				return rec, out, reason, tok
			}
			o.Consumed(end)
			rec.hasUsage = true
		case o.KeyIs("status"):
			if dup(mStatus) {
				return rec, out, "a member appears twice", false
			}
			n, end, ok := parseCount(data, v, 999)
			if !ok {
				return rec, out, "status is not an HTTP status code", false
			}
			o.Consumed(end)
			rec.status, rec.hasStatus = n, true
		}
		if r != "" {
			return rec, out, r, false
		}
	}
	if o.Err() != nil {
		return rec, out, "the record is not valid JSON", false
	}
	if jsonscan.SkipSpace(data, o.End()) != len(data) {
		return rec, out, "unexpected data after the record", false
	}
	switch {
	case !rec.method.present():
		return rec, out, "the required member method is missing", false
	case !rec.origin.present():
		return rec, out, "the required member origin is missing", false
	case !rec.path.present():
		return rec, out, "the required member path is missing", false
	}
	return rec, out, "", false
}

// checkHeaders validates a headers object: every value a string.
func checkHeaders(data []byte, i int) (int, bool) {
	o, err := jsonscan.OpenObject(data, i, 1)
	if err != nil {
		return i, false
	}
	for o.Next() {
		if data[o.Value()] != '"' {
			return i, false
		}
		end, _, err := jsonscan.ScanString(data, o.Value())
		if err != nil {
			return i, false
		}
		o.Consumed(end)
	}
	return o.End(), o.Err() == nil
}

// parseUsage reads the token counts of a usage object.
func parseUsage(data []byte, i, depth int, maxTokens int64, u *usage) (int, string, bool) {
	if data[i] != '{' {
		return i, "usage is not an object", false
	}
	return parseCounts(data, i, depth, maxTokens, u, "", usageFields)
}

// parseCounts reads the counts of one object: usage (parent ""), or one of its details
// objects (parent its name).
func parseCounts(data []byte, i, depth int, maxTokens int64, u *usage, parent string, fields []countField) (int, string, bool) {
	o, err := jsonscan.OpenObject(data, i, depth)
	if err != nil {
		return i, "the record is not valid JSON", false
	}
	for o.Next() {
		v := o.Value()
		if parent == "" {
			var sub []countField
			var name string
			for _, d := range usageDetails {
				if o.KeyIs(d.name) {
					sub, name = d.fields, d.name
				}
			}
			if sub != nil && data[v] != 'n' {
				if data[v] != '{' {
					return i, "usage." + name + " is not an object", false
				}
				end, reason, tok := parseCounts(data, v, o.Depth(), maxTokens, u, name, sub)
				if reason != "" {
					return i, reason, tok
				}
				o.Consumed(end)
				continue
			}
		}
		var field *countField
		for k := range fields {
			if o.KeyIs(fields[k].name) {
				field = &fields[k]
			}
		}
		if field == nil {
			continue
		}
		if data[v] == 'n' {
			end, err := jsonscan.SkipValue(data, v, o.Depth())
			if err != nil {
				return i, "the record is not valid JSON", false
			}
			o.Consumed(end)
			continue
		}
		n, end, ok := parseCount(data, v, maxTokens)
		if !ok {
			where := "usage."
			if parent != "" {
				where += parent + "."
			}
			return i, where + field.name + " is not a whole number from 0 to the token count limit (negative, fractional, exponent form, not a number, or absurdly large)", true
		}
		o.Consumed(end)
		*field.dst(u) = n
	}
	if o.Err() != nil {
		return i, "the record is not valid JSON", false
	}
	return o.End(), "", false
}

// parseCount reads a whole number written with digits only, at most max.
func parseCount(data []byte, i int, max int64) (int64, int, bool) {
	end, err := jsonscan.ScanNumber(data, i)
	if err != nil {
		return 0, i, false
	}
	var n int64
	for _, c := range data[i:end] {
		if c < '0' || c > '9' {
			return 0, i, false // '-', '.', 'e'
		}
		if n > (max-int64(c-'0'))/10 {
			return 0, i, false
		}
		n = n*10 + int64(c-'0')
	}
	if n > max {
		return 0, i, false
	}
	return n, end, true
}

// parseHexDigest decodes 64 lowercase hexadecimal digits.
func parseHexDigest(s []byte, dst *[32]byte) bool {
	if len(s) != 64 {
		return false
	}
	for k := range 32 {
		hi, ok1 := lowerHex(s[2*k])
		lo, ok2 := lowerHex(s[2*k+1])
		if !ok1 || !ok2 {
			return false
		}
		dst[k] = hi<<4 | lo
	}
	return true
}

func lowerHex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}
