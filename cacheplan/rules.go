package cacheplan

import "strings"

// The provider's prompt-caching rules this package plans within. doc.go cites where each
// comes from; they are provider policy and can change, so each lives in one place.
const (
	// MaxBreakpoints is the most cache_control breakpoints one request may carry.
	MaxBreakpoints = 4
	// LookbackBlocks is how many content blocks before a breakpoint the provider checks for
	// an earlier cache entry. A breakpoint further than this past the previous request's
	// breakpoint finds nothing and rewrites the whole prefix.
	LookbackBlocks = 20
	// BytesPerToken is the ratio of the size estimate: tokens ≈ bytes / 4. It is an estimate
	// over the body's JSON bytes, not a tokenizer count.
	BytesPerToken = 4
	// DenseBytesPerToken is the fewest request JSON bytes a token is taken to span when
	// deciding that a prefix cannot reach a model's minimum cacheable length: code, logs and
	// JSON-escaped text tokenize denser than BytesPerToken, seldom below 3 bytes a token (text
	// in scripts of 3-byte UTF-8 characters can, and then a marker the prompt could use is left
	// out, on a prefix too short to save much). A prefix under minimum × DenseBytesPerToken
	// bytes gets no marker.
	DenseBytesPerToken = 3
)

// TTL is the lifetime of a cache entry, spelled as the API spells it.
type TTL string

// The lifetimes the API accepts. A marker without a ttl field gets TTL5m.
const (
	TTL5m TTL = "5m"
	TTL1h TTL = "1h"
)

// rank orders lifetimes: within one request a longer one must not follow a shorter one.
func (t TTL) rank() int {
	switch t {
	case TTL1h:
		return 2
	case TTL5m:
		return 1
	}
	return 0
}

// EstimateTokens estimates the tokens in n bytes of request JSON: n / BytesPerToken, rounded
// up. It counts JSON syntax too and is no substitute for the provider's tokenizer.
func EstimateTokens(n int) int { return (n + BytesPerToken - 1) / BytesPerToken }

// minimum is one row of the minimum cacheable prompt length table.
type minimum struct {
	prefix string // model id prefix, matched at a '-', '@', ':' or end boundary
	tokens int
}

// minimums lists the documented minimum cacheable prompt length per model family; a shorter
// prefix is processed without being cached. Longest prefix wins. Sources in doc.go.
var minimums = []minimum{
	{"claude-fable-5", 512},
	{"claude-mythos-5", 512},
	{"claude-opus-5", 512},
	{"claude-sonnet-5", 1024},
	{"claude-opus-4-8", 1024},
	{"claude-opus-4-7", 2048},
	{"claude-opus-4-6", 4096},
	{"claude-opus-4-5", 4096},
	{"claude-opus-4-1", 1024},
	{"claude-opus-4", 1024},
	{"claude-sonnet-4-6", 1024},
	{"claude-sonnet-4-5", 1024},
	{"claude-sonnet-4", 1024},
	{"claude-haiku-4-5", 4096},
	{"claude-3-7-sonnet", 1024},
	{"claude-3-5-sonnet", 1024},
	{"claude-3-5-haiku", 2048},
	{"claude-3-haiku", 2048},
	{"claude-3-opus", 1024},
}

// MinimumCacheableTokens returns the documented minimum cacheable prompt length for a model
// id such as "claude-sonnet-4-5-20250929" (a provider prefix like "anthropic." or "us." is
// allowed), and false for a model this table does not know.
func MinimumCacheableTokens(model string) (tokens int, family string, ok bool) {
	if k := strings.Index(model, "claude-"); k > 0 {
		model = model[k:]
	}
	best := -1
	for n, m := range minimums {
		if !strings.HasPrefix(model, m.prefix) {
			continue
		}
		if rest := model[len(m.prefix):]; rest != "" && rest[0] != '-' && rest[0] != '@' && rest[0] != ':' {
			continue
		}
		if best < 0 || len(m.prefix) > len(minimums[best].prefix) {
			best = n
		}
	}
	if best < 0 {
		return 0, "", false
	}
	return minimums[best].tokens, minimums[best].prefix, true
}

// OpenAI's automatic prefix caching (doc.go cites the sources): no marker, a minimum length,
// and hits counted in blocks.
const (
	// OpenAIMinimumTokens is the shortest prompt OpenAI caches: 1,024 tokens.
	OpenAIMinimumTokens = 1024
	// OpenAIIncrementTokens is the block size of a cache hit past the minimum: a hit covers
	// the longest matching prefix in whole 128-token blocks.
	OpenAIIncrementTokens = 128
	// OpenAIBreakpointTTL is the lifetime of a gpt-5.6 cache breakpoint, the only value
	// prompt_cache_options.ttl accepts.
	OpenAIBreakpointTTL TTL = "30m"
)

// OpenAICacheableTokens returns how many of a prefix of n tokens OpenAI's cache can hold: n
// rounded down to whole 128-token blocks, and none under the 1,024-token minimum (1,024 is
// itself 8 blocks).
func OpenAICacheableTokens(n int) int {
	if n < OpenAIMinimumTokens {
		return 0
	}
	return n / OpenAIIncrementTokens * OpenAIIncrementTokens
}
