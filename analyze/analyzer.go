package analyze

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"slices"

	"github.com/agent-rewind/rewind/internal/jsonscan"
)

// Options tune an analysis.
type Options struct {
	// Limits; zero fields take the defaults.
	Limits Limits
	// Origins are upstream origins to count as known besides DefaultOrigin, such as a
	// provider-compatible proxy, as scheme://host[:port].
	Origins []string
	// Legacy adds the per-scope breakdown and the redacted sample (Report.Legacy): the report
	// is then no longer attested and must be reviewed before it is shared.
	Legacy bool
}

// analyzer holds one analysis's state. Its memory is bounded by the limits: the key table
// (RequestKeys entries), the scope table (Scopes entries) and one record's scratch space.
type analyzer struct {
	lim     Limits
	legacy  bool
	rep     *Report
	keys    map[[32]byte]uint32 // request key -> times seen
	scopes  map[string]*ScopeStats
	origins *origins
	canon   jsonscan.Canonicalizer
	cbuf    []byte
	dec     []byte
	key     keyBuilder
	src     hash.Hash
	srcN    int64
	best    int64 // repeats of the sampled request
}

func newAnalyzer(opts Options, format Format) (*analyzer, error) {
	o, err := newOrigins(opts.Origins)
	if err != nil {
		return nil, err
	}
	lim := opts.Limits.withDefaults()
	a := &analyzer{
		lim:     lim,
		legacy:  opts.Legacy,
		keys:    map[[32]byte]uint32{},
		scopes:  map[string]*ScopeStats{},
		origins: o,
		src:     sha256.New(),
		rep: &Report{
			Kind:      ReportKind,
			Attested:  !opts.Legacy,
			Source:    Source{Format: format},
			Limits:    lim,
			Statement: Statement,
		},
	}
	if opts.Legacy {
		a.rep.Legacy = &Legacy{ReviewBeforeSharing: true, Warning: LegacyWarning, Scopes: []ScopeStats{}}
	}
	return a, nil
}

// consumed adds input bytes to the source's count and digest.
func (a *analyzer) consumed(b []byte) {
	a.src.Write(b)
	a.srcN += int64(len(b))
}

func (a *analyzer) sourceSum() [32]byte {
	var s [32]byte
	a.src.Sum(s[:0])
	return s
}

func (a *analyzer) limitErr(limit string, max, got int64, atLeast bool, recNo int64, rec []byte) *LimitError {
	e := &LimitError{Limit: limit, Max: max, Got: got, AtLeast: atLeast, Record: recNo, SourceBytes: a.srcN, SourceSHA256: a.sourceSum()}
	if rec != nil {
		e.RecordSHA256 = sha256.Sum256(rec)
	}
	return e
}

func (a *analyzer) recordErr(err error, reason string, recNo, offset int64, rec []byte) *RecordError {
	return &RecordError{Err: err, Reason: reason, Record: recNo, Offset: offset, Bytes: int64(len(rec)), SHA256: sha256.Sum256(rec)}
}

// finish completes the report.
func (a *analyzer) finish() *Report {
	a.rep.Source.Bytes = a.srcN
	s := a.sourceSum()
	a.rep.Source.SHA256 = hex.EncodeToString(s[:])
	a.rep.DistinctRequestKeys = int64(len(a.keys))
	if a.legacy {
		for _, st := range a.scopes {
			a.rep.Legacy.Scopes = append(a.rep.Legacy.Scopes, *st)
		}
		slices.SortFunc(a.rep.Legacy.Scopes, func(x, y ScopeStats) int { return bytes.Compare([]byte(x.Scope), []byte(y.Scope)) })
	}
	return a.rep
}

// record analyses one record: data is its bytes, recNo its 1-based number, offset where it
// starts in the input.
func (a *analyzer) record(data []byte, recNo, offset int64) error {
	rec, cbuf, reason, tokenErr := parseRecord(data, &a.canon, a.cbuf, a.lim.MaxTokenCount)
	a.cbuf = cbuf
	if reason != "" {
		if tokenErr {
			return a.recordErr(ErrInvalidTokenCount, reason, recNo, offset, data)
		}
		return a.recordErr(ErrInvalidRecord, reason, recNo, offset, data)
	}
	rep := a.rep
	if err := addChecked(&rep.Records, 1); err != nil {
		return err
	}

	// The scope, registered against the scope limit whether or not the record is eligible.
	var scope []byte
	scopeOK := true
	if rec.scope.present() {
		scope, _ = decoded(data, rec.scope, nil) // its own scratch: a.dec is reused below
		scopeOK = validScope(scope)
	}
	var st *ScopeStats
	if scopeOK {
		st = a.scopes[string(scope)]
		if st == nil {
			if len(a.scopes) >= a.lim.Scopes {
				return a.limitErr("scopes", int64(a.lim.Scopes), int64(len(a.scopes))+1, false, recNo, nil)
			}
			st = &ScopeStats{Scope: string(scope)}
			a.scopes[st.Scope] = st
		}
		if err := addChecked(&st.Records, 1); err != nil {
			return err
		}
	}

	// Eligibility, first failing reason counted.
	method, _ := decoded(data, rec.method, nil)
	path, _ := decoded(data, rec.path, nil)
	api, _ := apiOfPath(path)
	tokens, believable := tokensOf(api, &rec.usage)
	if rec.hasUsage && !believable {
		return a.recordErr(ErrInvalidTokenCount, "usage counts more cached input tokens than input tokens, or more reasoning tokens than output tokens", recNo, offset, data)
	}
	var reasonCounter *int64
	origin := ""
	var sig [len(significantHeaders)]str // significant header values, in key order
	switch {
	case string(method) != "POST" || api == "":
		reasonCounter = &rep.Ineligible.UnsupportedRequest
	default:
		rawOrigin, _ := decoded(data, rec.origin, nil)
		var ok bool
		if origin, ok = a.origins.lookup(rawOrigin); !ok {
			reasonCounter = &rep.Ineligible.UnknownOrigin
			break
		}
		if c := a.headers(data, rec.headers, &sig); c != nil {
			reasonCounter = c
			break
		}
		switch {
		case !scopeOK:
			reasonCounter = &rep.Ineligible.InvalidScope
		case rec.hasStatus && (rec.status < 200 || rec.status > 299):
			reasonCounter = &rep.Ineligible.UnsuccessfulStatus
		case rec.body == 0 && !rec.hasBodySHA, api == APIResponses && rec.body == 0:
			// A Responses request's eligibility depends on its members: a digest alone
			// cannot show them.
			reasonCounter = &rep.Ineligible.MissingBody
		case api == APIResponses && holdsProviderState(data, rec.body, 1):
			reasonCounter = &rep.Ineligible.ProviderState
		}
	}
	if reasonCounter != nil {
		return addChecked(reasonCounter, 1)
	}
	if err := addChecked(&rep.EligibleRecords, 1); err != nil {
		return err
	}
	perAPI := rep.APIs.of(api)
	if err := addChecked(&perAPI.EligibleRecords, 1); err != nil {
		return err
	}
	if st != nil {
		if err := addChecked(&st.EligibleRecords, 1); err != nil {
			return err
		}
	}

	// The request key.
	digest := rec.bodySHA
	if rec.body != 0 {
		digest = sha256.Sum256(a.cbuf)
		if rec.hasBodySHA && digest != rec.bodySHA {
			return a.recordErr(ErrInvalidRecord, "bodySha256 does not match the body's canonical form", recNo, offset, data)
		}
	}
	a.key.reset()
	a.key.field(method)
	a.key.field([]byte(origin))
	a.key.field(path)
	for k, s := range sig {
		if !s.present() {
			continue
		}
		var v []byte
		v, a.dec = decoded(data, s, a.dec)
		a.key.field([]byte(significantHeaders[k]))
		a.key.field(v)
	}
	a.key.field([]byte("scope"))
	a.key.field(scope)
	a.key.field([]byte("body"))
	a.key.field(digest[:])
	key := a.key.sum()

	n, seen := a.keys[key]
	if !seen {
		if len(a.keys) >= a.lim.RequestKeys {
			return a.limitErr("request keys", int64(a.lim.RequestKeys), int64(len(a.keys))+1, false, recNo, nil)
		}
		a.keys[key] = 1
		if a.legacy && rep.Legacy.Sample == nil {
			a.sample(data, &rec, origin, 0)
		}
		return nil
	}

	if n < ^uint32(0) {
		a.keys[key] = n + 1
	}
	if err := addChecked(&rep.ExactRepeatOpportunities, 1); err != nil {
		return err
	}
	if err := addChecked(&perAPI.ExactRepeatOpportunities, 1); err != nil {
		return err
	}
	if st != nil {
		if err := addChecked(&st.ExactRepeatOpportunities, 1); err != nil {
			return err
		}
	}
	if !rec.hasUsage {
		if err := addChecked(&rep.RepeatsWithoutUsage, 1); err != nil {
			return err
		}
	} else {
		if err := rep.RepeatTokens.add(tokens); err != nil {
			return err
		}
		if err := perAPI.RepeatTokens.add(tokens); err != nil {
			return err
		}
		if st != nil {
			if err := st.RepeatTokens.add(tokens); err != nil {
				return err
			}
		}
	}
	if a.legacy && int64(n) > a.best {
		a.best = int64(n)
		a.sample(data, &rec, origin, int64(n))
	}
	return nil
}

// headers classifies a record's headers; it returns the counter of the reason the record is
// ineligible, or nil, and fills sig with the significant headers' values.
func (a *analyzer) headers(data []byte, at int, sig *[len(significantHeaders)]str) *int64 {
	if at == 0 {
		return nil
	}
	var seen [16]uint64 // hashes of names seen, to catch a name given twice
	nseen := 0
	var credential, unknown bool
	o, _ := jsonscan.OpenObject(data, at, 1)
	var lower [64]byte
	for o.Next() {
		name := jsonscan.AppendUnquoted(lower[:0], o.Key())
		for k, c := range name {
			if c >= 'A' && c <= 'Z' {
				name[k] = c + 'a' - 'A'
			}
		}
		class, idx := classifyHeader(name)
		h := fnv(name)
		for _, s := range seen[:min(nseen, len(seen))] {
			if s == h {
				unknown = true
			}
		}
		if nseen < len(seen) {
			seen[nseen] = h
		}
		nseen++
		switch class {
		case headerCredential:
			credential = true
		case headerUnknown:
			unknown = true
		case headerSignificant:
			end, esc, _ := jsonscan.ScanString(data, o.Value())
			sig[idx] = str{o.Value(), end, esc}
			o.Consumed(end)
		}
	}
	switch {
	case credential:
		return &a.rep.Ineligible.CredentialHeader
	case unknown || nseen > len(seen):
		return &a.rep.Ineligible.UnknownHeader
	}
	return nil
}

func fnv(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

// sample records the redacted shape of a record for the legacy report.
func (a *analyzer) sample(data []byte, rec *record, origin string, repeats int64) {
	path, _ := decoded(data, rec.path, nil)
	_, apiPath := apiOfPath(path)
	s := &Sample{Method: "POST", Origin: origin, Path: apiPath, Repeats: repeats, HeaderNames: []string{}, Body: []MemberShape{}}
	s.HasQuery = bytes.IndexByte(path, '?') >= 0
	if rec.headers != 0 {
		o, _ := jsonscan.OpenObject(data, rec.headers, 1)
		for o.Next() {
			name := bytes.ToLower(jsonscan.AppendUnquoted(nil, o.Key()))
			if c, _ := classifyHeader(name); c == headerSignificant || c == headerNeutral {
				s.HeaderNames = append(s.HeaderNames, string(name))
			}
		}
		slices.Sort(s.HeaderNames)
	}
	if rec.body != 0 && data[rec.body] == '{' {
		o, _ := jsonscan.OpenObject(data, rec.body, 1)
		for o.Next() {
			m := MemberShape{Name: memberName(jsonscan.AppendUnquoted(nil, o.Key()))}
			v := o.Value()
			end, _ := jsonscan.SkipValue(data, v, o.Depth())
			switch data[v] {
			case '"':
				m.Type, m.Bytes = "string", end-v
			case '[':
				m.Type, m.Items = "array", countItems(data, v, o.Depth())
			case '{':
				m.Type, m.Items = "object", countItems(data, v, o.Depth())
			case 't', 'f':
				m.Type = "boolean"
			case 'n':
				m.Type = "null"
			default:
				m.Type = "number"
			}
			o.Consumed(end)
			s.Body = append(s.Body, m)
		}
	}
	a.rep.Legacy.Sample = s
}

func countItems(data []byte, v, depth int) int {
	n := 0
	if data[v] == '[' {
		arr, _ := jsonscan.OpenArray(data, v, depth)
		for arr.Next() {
			n++
		}
		return n
	}
	obj, _ := jsonscan.OpenObject(data, v, depth)
	for obj.Next() {
		n++
	}
	return n
}

// memberName passes API field names and hides anything else.
func memberName(b []byte) string {
	if len(b) == 0 || len(b) > 64 {
		return "(unrecognised member)"
	}
	for _, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return "(unrecognised member)"
		}
	}
	return string(b)
}
