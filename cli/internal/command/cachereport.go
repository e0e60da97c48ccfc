package command

import (
	"fmt"
	"io"
	"strings"

	"github.com/agent-rewind/rewind/cacheplan"
)

// CacheReportCmd prints the cache-breakpoint plan for one Anthropic Messages request body.
type CacheReportCmd struct {
	Request string `arg:"" name:"request" help:"The request body: JSON, @PATH to read a file, or - for standard input (at most 32 MiB)."`
	TTL     string `name:"ttl" enum:"5m,1h" default:"5m" help:"Lifetime of the planned marker: 5m (the provider's default) or 1h."`
}

// Run plans and reports; it never prints the body or any prompt text.
func (c *CacheReportCmd) Run(env *Env) error {
	body, err := readBodyArg(env, c.Request, MaxBodyBytes)
	if err != nil {
		return err
	}
	plan, err := cacheplan.PlanRequest(body, cacheplan.Options{TTL: cacheplan.TTL(c.TTL)})
	if err != nil {
		return fmt.Errorf("%w; give one Anthropic Messages request body", err)
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
	fmt.Fprintf(&b, "  why: %s\n", p.Reason)
	for _, bp := range p.Breakpoints {
		fmt.Fprintf(&b, "  breakpoint: %s (%s, ttl %s) caches %d bytes, about %d tokens\n", bp.Location, bp.Role, bp.TTL, bp.PrefixBytes, bp.EstimatedPrefixTokens)
	}
	for _, e := range p.Existing {
		fmt.Fprintf(&b, "  client marker: %s (ttl %s)\n", e.Location, e.TTL)
	}
	if p.Format == cacheplan.FormatMessages {
		fmt.Fprintf(&b, "  request: %d tools, %d system blocks, %d messages, %d message blocks\n", p.Counts.Tools, p.Counts.SystemBlocks, p.Counts.Messages, p.Counts.MessageBlocks)
	}
	if p.Decision == cacheplan.DecisionInsert || p.Decision == cacheplan.DecisionBelowMinimum {
		fmt.Fprintf(&b, "  cacheable prefix: %d bytes, about %d tokens (estimate: JSON bytes / %d, not a tokenizer count)\n", p.PrefixBytes, p.EstimatedPrefixTokens, cacheplan.BytesPerToken)
		if p.MinimumTokens > 0 {
			fmt.Fprintf(&b, "  model minimum: %d tokens (%s)\n", p.MinimumTokens, p.ModelFamily)
		} else {
			fmt.Fprintf(&b, "  model minimum: unknown for this model\n")
		}
	}
	for _, warn := range p.Warnings {
		fmt.Fprintf(&b, "  warning [%s]: %s\n", warn.Code, warn.Message)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
