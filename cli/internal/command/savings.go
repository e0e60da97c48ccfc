package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/agent-rewind/rewind/cli/internal/workspace"
	"github.com/agent-rewind/rewind/gateway"
	"github.com/agent-rewind/rewind/tape/pgtape"
)

// SavingsCmd prints the gateway's replay-savings receipt.
type SavingsCmd struct {
	Fleet bool `help:"Print a team gateway's receipt for the whole fleet, from the database in REWIND_DATABASE_URL."`
}

// Run prints savings.json of the workspace's store (zeros and the note when there is none),
// or with --fleet the team's receipt. It never creates a store.
func (c SavingsCmd) Run(env *Env) error {
	if c.Fleet {
		var s gateway.Savings
		err := withTeamStore(func(ctx context.Context, store *pgtape.Store) (err error) {
			s, err = gateway.FleetSavings(ctx, store)
			return err
		})
		if err != nil {
			return err
		}
		return env.Emit(s, func(w io.Writer) error { return writeSavings(w, s) })
	}
	var s gateway.Savings
	root, err := env.root()
	if err != nil {
		return err
	}
	ws, err := workspace.Open(root)
	switch {
	case errors.Is(err, workspace.ErrNotInitialized):
		s, err = gateway.LoadSavings(filepath.Join(root, workspace.LegacyDir, gateway.SavingsFileName)) // absent: zeros and the note
	case err == nil:
		s, err = gateway.LoadSavings(ws.Path(gateway.SavingsFileName))
	}
	if err != nil {
		return err
	}
	return env.Emit(s, func(w io.Writer) error { return writeSavings(w, s) })
}

func writeSavings(w io.Writer, s gateway.Savings) error {
	var b strings.Builder
	b.WriteString("Replay savings only (calls the gateway answered from a recording instead of the provider)\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	t := s.AvoidedTokens
	fmt.Fprintf(tw, "  replayed calls\t%d\n", s.ReplayedCalls)
	reasoning := ""
	if t.Reasoning > 0 { // OpenAI's reasoning tokens, billed as output and counted in it
		reasoning = fmt.Sprintf(" (of which reasoning %d)", t.Reasoning)
	}
	fmt.Fprintf(tw, "  avoided tokens\tinput %d, output %d%s, cache read %d, cache write %d\n", t.Input, t.Output, reasoning, t.CacheRead, t.CacheWrite)
	fmt.Fprintf(tw, "  avoided cost\t$%.6f\n", s.AvoidedCostUSD)
	if s.UnpricedCalls > 0 {
		fmt.Fprintf(tw, "  unpriced calls\t%d (their model has no price: tokens counted, cost not)\n", s.UnpricedCalls)
	}
	for _, name := range slices.Sorted(maps.Keys(s.ByModel)) {
		m := s.ByModel[name]
		price := fmt.Sprintf("$%.6f", m.AvoidedCostUSD)
		if !m.Priced {
			price = "unpriced"
		}
		fmt.Fprintf(tw, "  %s\t%d calls, %s\n", name, m.ReplayedCalls, price)
	}
	tw.Flush()
	fmt.Fprintf(&b, "Prices: %s, as of %s", s.Prices.Source, s.Prices.Date)
	if len(s.Prices.Overridden) > 0 {
		fmt.Fprintf(&b, "; from the configuration file for %s", strings.Join(s.Prices.Overridden, ", "))
	}
	b.WriteString(".\n")
	if s.Updated != "" {
		fmt.Fprintf(&b, "Updated: %s\n", s.Updated)
	}
	fmt.Fprintf(&b, "Note: %s.\n", s.Note)
	_, err := io.WriteString(w, b.String())
	return err
}
