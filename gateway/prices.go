package gateway

import (
	"maps"
	"slices"
	"strings"
)

// Price is one model's price in US dollars per million tokens, by the kinds of tokens the
// provider bills.
type Price struct {
	Input        float64 `json:"input"`
	Output       float64 `json:"output"`
	CacheWrite5m float64 `json:"cache_write_5m"`
	CacheWrite1h float64 `json:"cache_write_1h"`
	CacheRead    float64 `json:"cache_read"`
}

// PriceTable maps a model id ("claude-sonnet-5-5") to its price.
type PriceTable map[string]Price

// PriceSource and PriceDate document DefaultPrices. The savings receipt quotes them.
const (
	PriceSource = "https://platform.claude.com/docs/en/about-claude/pricing (model pricing table; prompt-caching multipliers) and the per-model overviews under https://platform.claude.com/docs/en/models/; claude-sonnet-5-5 cache reads at $0.10 after Anthropic's cut of 2026-10-07; claude-haiku-5-5 at its prompts-up-to-100k-tokens rates; OpenAI models: https://developers.openai.com/api/docs/pricing (standard tier: input, cached input, output; cache writes are free)"
	PriceDate   = "2026-11-30"
)

// DefaultPrices is the price table the savings receipt uses unless the configuration file's
// "prices" replaces entries (see PriceSource and PriceDate; standard API rates, no batch,
// long-context or regional pricing). A model id also matches with a date suffix
// ("claude-sonnet-4-5-20250929") or a "[1m]" suffix; a model it does not know is counted
// in the receipt as unpriced, never guessed.
var DefaultPrices = PriceTable{
	"claude-fable-5-1":  {Input: 10, Output: 50, CacheWrite5m: 12.5, CacheWrite1h: 20, CacheRead: 0.25},
	"claude-fable-5":    {Input: 10, Output: 50, CacheWrite5m: 12.5, CacheWrite1h: 20, CacheRead: 1},
	"claude-opus-5-5":   {Input: 4, Output: 20, CacheWrite5m: 5, CacheWrite1h: 8, CacheRead: 0.2},
	"claude-opus-5":     {Input: 5, Output: 25, CacheWrite5m: 6.25, CacheWrite1h: 10, CacheRead: 0.5},
	"claude-opus-4-8":   {Input: 5, Output: 25, CacheWrite5m: 6.25, CacheWrite1h: 10, CacheRead: 0.5},
	"claude-opus-4-7":   {Input: 5, Output: 25, CacheWrite5m: 6.25, CacheWrite1h: 10, CacheRead: 0.5},
	"claude-opus-4-6":   {Input: 5, Output: 25, CacheWrite5m: 6.25, CacheWrite1h: 10, CacheRead: 0.5},
	"claude-opus-4-5":   {Input: 5, Output: 25, CacheWrite5m: 6.25, CacheWrite1h: 10, CacheRead: 0.5},
	"claude-opus-4-1":   {Input: 15, Output: 75, CacheWrite5m: 18.75, CacheWrite1h: 30, CacheRead: 1.5},
	"claude-opus-4-0":   {Input: 15, Output: 75, CacheWrite5m: 18.75, CacheWrite1h: 30, CacheRead: 1.5},
	"claude-opus-4":     {Input: 15, Output: 75, CacheWrite5m: 18.75, CacheWrite1h: 30, CacheRead: 1.5},
	"claude-sonnet-5-5": {Input: 2, Output: 10, CacheWrite5m: 2.5, CacheWrite1h: 4, CacheRead: 0.1},
	"claude-sonnet-5":   {Input: 2, Output: 10, CacheWrite5m: 2.5, CacheWrite1h: 4, CacheRead: 0.2},
	"claude-sonnet-4-6": {Input: 3, Output: 15, CacheWrite5m: 3.75, CacheWrite1h: 6, CacheRead: 0.3},
	"claude-sonnet-4-5": {Input: 3, Output: 15, CacheWrite5m: 3.75, CacheWrite1h: 6, CacheRead: 0.3},
	"claude-sonnet-4-0": {Input: 3, Output: 15, CacheWrite5m: 3.75, CacheWrite1h: 6, CacheRead: 0.3},
	"claude-sonnet-4":   {Input: 3, Output: 15, CacheWrite5m: 3.75, CacheWrite1h: 6, CacheRead: 0.3},
	"claude-3-7-sonnet": {Input: 3, Output: 15, CacheWrite5m: 3.75, CacheWrite1h: 6, CacheRead: 0.3},
	"claude-haiku-5-5":  {Input: 0.1, Output: 0.5, CacheWrite5m: 0.125, CacheWrite1h: 0.2, CacheRead: 0.01},
	"claude-haiku-4-5":  {Input: 1, Output: 5, CacheWrite5m: 1.25, CacheWrite1h: 2, CacheRead: 0.1},
	"claude-3-5-haiku":  {Input: 0.8, Output: 4, CacheWrite5m: 1, CacheWrite1h: 1.6, CacheRead: 0.08},
	"claude-3-haiku":    {Input: 0.25, Output: 1.25, CacheWrite5m: 0.3, CacheWrite1h: 0.5, CacheRead: 0.03},

	// OpenAI, standard tier. Its prompt cache is automatic and writing it costs nothing, so
	// both cache-write rates are 0; cached input tokens are CacheRead; reasoning tokens are
	// billed as output.
	"gpt-5.5":            {Input: 5, Output: 30, CacheRead: 0.5},
	"gpt-5.4":            {Input: 2.5, Output: 15, CacheRead: 0.25},
	"gpt-5.4-mini":       {Input: 0.75, Output: 4.5, CacheRead: 0.075},
	"gpt-5.4-nano":       {Input: 0.2, Output: 1.25, CacheRead: 0.02},
	"gpt-5.2":            {Input: 1.75, Output: 14, CacheRead: 0.175},
	"gpt-5.1":            {Input: 1.25, Output: 10, CacheRead: 0.125},
	"gpt-5.1-codex":      {Input: 1.25, Output: 10, CacheRead: 0.125},
	"gpt-5.1-codex-mini": {Input: 0.25, Output: 2, CacheRead: 0.025},
	"gpt-5":              {Input: 1.25, Output: 10, CacheRead: 0.125},
	"gpt-5-codex":        {Input: 1.25, Output: 10, CacheRead: 0.125},
	"gpt-5-mini":         {Input: 0.25, Output: 2, CacheRead: 0.025},
	"gpt-5-nano":         {Input: 0.05, Output: 0.4, CacheRead: 0.005},
	"gpt-4.1":            {Input: 2, Output: 8, CacheRead: 0.5},
	"gpt-4.1-mini":       {Input: 0.4, Output: 1.6, CacheRead: 0.1},
	"gpt-4.1-nano":       {Input: 0.1, Output: 0.4, CacheRead: 0.025},
	"gpt-4o":             {Input: 2.5, Output: 10, CacheRead: 1.25},
	"gpt-4o-mini":        {Input: 0.15, Output: 0.6, CacheRead: 0.075},
	"o3":                 {Input: 2, Output: 8, CacheRead: 0.5},
	"o4-mini":            {Input: 1.1, Output: 4.4, CacheRead: 0.275},
}

// Lookup finds model's price: an exact id, else the id without a "[1m]" suffix or a date
// suffix, Anthropic's "-YYYYMMDD" or OpenAI's "-YYYY-MM-DD" ("gpt-4o-2024-08-06"). Nothing
// looser: "claude-opus-4-9" is not priced as "claude-opus-4", nor "gpt-5-pro" as "gpt-5".
func (t PriceTable) Lookup(model string) (Price, bool) {
	if p, ok := t[model]; ok {
		return p, true
	}
	base := strings.TrimSuffix(model, "[1m]")
	if p, ok := t[base]; ok {
		return p, true
	}
	if i := strings.LastIndexByte(base, '-'); i > 0 && isDate(base[i+1:]) {
		p, ok := t[base[:i]]
		return p, ok
	}
	if n := len(base) - len("-2024-08-06"); n > 0 && base[n] == '-' && base[n+5] == '-' && base[n+8] == '-' &&
		isDate(base[n+1:n+5]+base[n+6:n+8]+base[n+9:]) {
		p, ok := t[base[:n]]
		return p, ok
	}
	return Price{}, false
}

func isDate(s string) bool {
	if len(s) != 8 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Cost prices usage in US dollars. Cache writes are split by lifetime when the usage says
// how (cache_creation); otherwise they are priced at the 5-minute rate, the default lifetime.
func (p Price) Cost(u Usage) float64 {
	write := float64(u.CacheWrite) * p.CacheWrite5m
	if u.CacheWriteSplit {
		write = float64(u.CacheWrite5m)*p.CacheWrite5m + float64(u.CacheWrite1h)*p.CacheWrite1h
	}
	return (float64(u.Input)*p.Input + float64(u.Output)*p.Output + write + float64(u.CacheRead)*p.CacheRead) / 1e6
}

// merged returns a copy of t with over's entries added or replacing.
func (t PriceTable) merged(over PriceTable) PriceTable {
	out := maps.Clone(t)
	maps.Copy(out, over)
	return out
}

// models returns the table's model ids, sorted.
func (t PriceTable) models() []string {
	return slices.Sorted(maps.Keys(t))
}
