package command

import (
	"fmt"
	"io"
	"strings"

	"github.com/agent-rewind/rewind/cacheplan"
)

// CacheReportCmd reports on prompt caching for one request body: where an Anthropic
// cache breakpoint would go, or what OpenAI's automatic prefix caching holds.
type CacheReportCmd struct {
	Request string `arg:"" name:"request" help:"The request body: JSON, @PATH to read a file, or - for standard input (at most 32 MiB)."`
	TTL     string `name:"ttl" enum:"5m,1h" default:"5m" help:"Lifetime of the planned marker (Anthropic Messages): 5m (the provider's default) or 1h."`
	APIFlag `embed:""`
}

// Run plans and reports; it never prints the body or any prompt text.
func (c *CacheReportCmd) Run(env *Env) error {
	body, err := readBodyArg(env, c.Request, MaxBodyBytes)
	if err != nil {
		return err
	}
	plan, err := cacheplan.PlanRequest(body, cacheplan.Options{TTL: cacheplan.TTL(c.TTL), Format: c.format()})
	if err != nil {
		return fmt.Errorf("%w; give one request body: %s", err, cacheplan.SupportedShapes)
	}
	if plan.Format == cacheplan.FormatOther {
		return unsupported(strings.TrimSuffix(plan.Reason, "; left unchanged"))
	}
	if plan.Breakpoints == nil {
		plan.Breakpoints = []cacheplan.Breakpoint{}
	}
	if plan.Existing == nil {
		plan.Existing = []cacheplan.Breakpoint{}
	}
	if plan.Warnings == nil {
		plan.Warnings = []cacheplan.Warning{}
	}
	return env.Emit(plan, func(w io.Writer) error { return writePlan(w, plan) })
}

func writePlan(w io.Writer, p *cacheplan.Plan) error {
	var b strings.Builder
	fmt.Fprintf(&b, "cache-report: %s (%s)\n", p.Decision, p.Format)
	fmt.Fprintf(&b, "  read as: %s\n", readAs(p.Format, p.Detection))
	fmt.Fprintf(&b, "  why: %s\n", p.Reason)
	for _, bp := range p.Breakpoints {
		fmt.Fprintf(&b, "  breakpoint: %s (%s, ttl %s) caches %d bytes, about %d tokens\n", bp.Location, bp.Role, bp.TTL, bp.PrefixBytes, bp.EstimatedPrefixTokens)
	}
	for _, e := range p.Existing {
		fmt.Fprintf(&b, "  client marker: %s (ttl %s)\n", e.Location, e.TTL)
	}
	if pc := p.PrefixCaching; pc != nil {
		writePrefixCaching(&b, p, pc)
	} else {
		fmt.Fprintf(&b, "  request: %d tools, %d system blocks, %d messages, %d message blocks\n", p.Counts.Tools, p.Counts.SystemBlocks, p.Counts.Messages, p.Counts.MessageBlocks)
		if p.Decision == cacheplan.DecisionInsert || p.Decision == cacheplan.DecisionBelowMinimum {
			fmt.Fprintf(&b, "  cacheable prefix: %d bytes, about %d tokens (estimate: JSON bytes / %d, not a tokenizer count)\n", p.PrefixBytes, p.EstimatedPrefixTokens, cacheplan.BytesPerToken)
			if p.MinimumTokens > 0 {
				fmt.Fprintf(&b, "  model minimum: %d tokens (%s)\n", p.MinimumTokens, p.ModelFamily)
			} else {
				fmt.Fprintf(&b, "  model minimum: unknown for this model\n")
			}
		}
	}
	for _, warn := range p.Warnings {
		fmt.Fprintf(&b, "  warning [%s]: %s\n", warn.Code, warn.Message)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writePrefixCaching writes what OpenAI's automatic caching holds of a Responses or Chat body.
func writePrefixCaching(b *strings.Builder, p *cacheplan.Plan, pc *cacheplan.PrefixCaching) {
	if p.Format == cacheplan.FormatOpenAIChat {
		fmt.Fprintf(b, "  request: %d tools, %d messages, %d content blocks\n", p.Counts.Tools, p.Counts.Messages, p.Counts.MessageBlocks)
	} else {
		instructions := "no instructions"
		if p.Counts.SystemBlocks > 0 {
			instructions = "instructions"
		}
		fmt.Fprintf(b, "  request: %d tools, %s, %d input items, %d content parts\n", p.Counts.Tools, instructions, p.Counts.Messages, p.Counts.MessageBlocks)
	}
	fmt.Fprintf(b, "  prompt: %d bytes, about %d tokens (estimate: JSON bytes / %d, not a tokenizer count); the cache holds about %d of them (whole %d-token blocks, from %d)\n",
		p.PrefixBytes, p.EstimatedPrefixTokens, cacheplan.BytesPerToken, pc.CacheableTokens, pc.IncrementTokens, pc.MinimumTokens)
	if t := pc.PreviousTurn; t != nil {
		fmt.Fprintf(b, "  stable since the previous turn: everything before %s, %d bytes, about %d tokens (%d cacheable); new this turn: from %s on\n",
			t.NewFrom, t.Bytes, t.EstimatedTokens, t.CacheableTokens, t.NewFrom)
	} else {
		fmt.Fprintf(b, "  stable since the previous turn: nothing yet (no answer of the model in the request: a first turn)\n")
	}
	if pc.PromptCacheKey {
		fmt.Fprintf(b, "  prompt_cache_key: set (%d bytes): OpenAI routes by it with the prompt's first tokens; keep it the same on every turn of this conversation\n", pc.PromptCacheKeyBytes)
	} else {
		fmt.Fprintf(b, "  prompt_cache_key: not set\n")
	}
	if pc.Retention != "" {
		fmt.Fprintf(b, "  prompt_cache_retention: %s\n", pc.Retention)
	}
	if pc.Mode != "" {
		fmt.Fprintf(b, "  prompt_cache_options.mode: %s\n", pc.Mode)
	}
}
