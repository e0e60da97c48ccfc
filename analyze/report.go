package analyze

import "math"

// ReportKind names the report format and its version.
const ReportKind = "agent-rewind/analyze-report/v1"

// Statement is printed with every report: what the numbers are and are not.
const Statement = "Hypothetical exact-request repeat opportunities, not realised savings: a repeat " +
	"could only have been answered without a model call if an exact replay gateway had recorded " +
	"the first response, under the same credential, while it was still held; provider prompt " +
	"caching may already have discounted some of these tokens."

// Report is the result of an analysis. Without Legacy it holds aggregate counters and the
// source's size and digest only: no prompt samples and no scope labels.
type Report struct {
	Kind     string `json:"kind"`
	Attested bool   `json:"attested"`
	Source   Source `json:"source"`
	// Records counts every record; EligibleRecords those that are replay candidates.
	Records         int64      `json:"records"`
	EligibleRecords int64      `json:"eligibleRecords"`
	Ineligible      Ineligible `json:"ineligible"`
	// DistinctRequestKeys counts the different eligible requests.
	DistinctRequestKeys int64 `json:"distinctRequestKeys"`
	// ExactRepeatOpportunities counts eligible records whose request key was seen before.
	ExactRepeatOpportunities int64 `json:"exactRepeatOpportunities"`
	// RepeatTokens sums the usage of those repeats; RepeatsWithoutUsage counts repeats that
	// carried none.
	RepeatTokens        Tokens `json:"repeatTokens"`
	RepeatsWithoutUsage int64  `json:"repeatsWithoutUsage"`
	// APIs breaks the eligible records and their repeats down by API.
	APIs      APIs    `json:"apis"`
	Limits    Limits  `json:"limits"`
	Statement string  `json:"statement"`
	Legacy    *Legacy `json:"legacy,omitempty"`
}

// Source describes the analysed input.
type Source struct {
	Format Format `json:"format"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// Ineligible counts records that are not replay candidates, by the first reason that applies
// (FORMAT.md, "Eligibility").
type Ineligible struct {
	UnsupportedRequest int64 `json:"unsupportedRequest"`
	UnknownOrigin      int64 `json:"unknownOrigin"`
	CredentialHeader   int64 `json:"credentialHeader"`
	UnknownHeader      int64 `json:"unknownHeader"`
	InvalidScope       int64 `json:"invalidScope"`
	UnsuccessfulStatus int64 `json:"unsuccessfulStatus"`
	MissingBody        int64 `json:"missingBody"`
	// ProviderState: a Responses request that continues or creates state the provider keeps
	// (previous_response_id, conversation, background: true), which no replay answers.
	ProviderState int64 `json:"providerState"`
}

// APIs are the per-API counters, one member per API whatever the capture holds.
type APIs struct {
	Messages  APIStats `json:"anthropic-messages"`
	Responses APIStats `json:"openai-responses"`
	Chat      APIStats `json:"openai-chat"`
}

// of returns the counters of one API.
func (a *APIs) of(api API) *APIStats {
	switch api {
	case APIResponses:
		return &a.Responses
	case APIChat:
		return &a.Chat
	}
	return &a.Messages
}

// APIStats are one API's counters.
type APIStats struct {
	EligibleRecords          int64  `json:"eligibleRecords"`
	ExactRepeatOpportunities int64  `json:"exactRepeatOpportunities"`
	RepeatTokens             Tokens `json:"repeatTokens"`
}

// Tokens are summed usage counts, alike for every API: Input is the input read without the
// cache (OpenAI's input or prompt tokens less their cached tokens), CacheReadInput what was
// read from it, CacheCreationInput what was written to it (Anthropic), Output the output;
// ReasoningOutput is the part of Output the model spent reasoning (OpenAI's
// reasoning_tokens), already in Output and Total.
type Tokens struct {
	Input              int64 `json:"input"`
	Output             int64 `json:"output"`
	CacheCreationInput int64 `json:"cacheCreationInput"`
	CacheReadInput     int64 `json:"cacheReadInput"`
	ReasoningOutput    int64 `json:"reasoningOutput"`
	Total              int64 `json:"total"`
}

// add adds u (as tokensOf reads it) to t, failing instead of overflowing.
func (t *Tokens) add(u usage) error {
	for _, p := range [...]struct {
		dst *int64
		v   int64
	}{{&t.Input, u.input}, {&t.Output, u.output}, {&t.CacheCreationInput, u.cacheCreation}, {&t.CacheReadInput, u.cacheRead}} {
		if err := addChecked(p.dst, p.v); err != nil {
			return err
		}
		if err := addChecked(&t.Total, p.v); err != nil {
			return err
		}
	}
	return addChecked(&t.ReasoningOutput, u.reasoning)
}

// addChecked adds v (non-negative) to *dst unless that would overflow.
func addChecked(dst *int64, v int64) error {
	if v < 0 || *dst > math.MaxInt64-v {
		return ErrCounterOverflow
	}
	*dst += v
	return nil
}

// Legacy is the expanded report of --legacy-json: it names scopes and shows a redacted
// request, so it must be reviewed before it is shared.
type Legacy struct {
	ReviewBeforeSharing bool         `json:"reviewBeforeSharing"`
	Warning             string       `json:"warning"`
	Sample              *Sample      `json:"sample"`
	Scopes              []ScopeStats `json:"scopes"`
}

// LegacyWarning is the warning every legacy report carries.
const LegacyWarning = "contains scope labels and a redacted request sample: review before sharing"

// Sample is the most repeated request (or the first eligible one), redacted to its shape.
type Sample struct {
	Method      string        `json:"method"`
	Origin      string        `json:"origin"`
	Path        string        `json:"path"`
	HasQuery    bool          `json:"hasQuery"`
	HeaderNames []string      `json:"headerNames"`
	Repeats     int64         `json:"repeats"`
	Body        []MemberShape `json:"body"`
}

// MemberShape is one top-level member of a sampled body: its name, JSON type and size, never
// its value.
type MemberShape struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Bytes int    `json:"bytes,omitempty"` // for a string: its JSON length
	Items int    `json:"items,omitempty"` // for an array or object: its element count
}

// ScopeStats are one scope's counters.
type ScopeStats struct {
	Scope                    string `json:"scope"`
	Records                  int64  `json:"records"`
	EligibleRecords          int64  `json:"eligibleRecords"`
	ExactRepeatOpportunities int64  `json:"exactRepeatOpportunities"`
	RepeatTokens             Tokens `json:"repeatTokens"`
}
