package command

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agent-rewind/rewind/barrier"
)

// EffectsCmd lists the effect ledger, so that a person can reconcile the keys that are pending
// (outcome unknown) or failed before releasing them. It only reads.
type EffectsCmd struct {
	Key   string   `arg:"" optional:"" help:"Show this key's record and its whole history instead of the list."`
	State []string `help:"List only keys in this state: pending, spent, failed, released (repeatable)." enum:"pending,spent,failed,released" placeholder:"STATE"`
}

// EffectsResult is the --json shape of "effects": the ledger's records (barrier.Record: key,
// fingerprint, state, first_seen, tool_use_id, checkpoint, seq, description, source, rule,
// generation, history), oldest first.
type EffectsResult struct {
	Ledger  string            `json:"ledger"`
	Effects []*barrier.Record `json:"effects"`
}

// Run lists the ledger, or shows one key.
func (c *EffectsCmd) Run(env *Env) error {
	ws, err := openWorkspace(env)
	if err != nil {
		return err
	}
	defer ws.Close()
	l, err := ws.Ledger()
	if err != nil {
		return err
	}
	if c.Key != "" {
		r, err := l.Get(c.Key)
		if err != nil {
			return err
		}
		return env.Emit(r, func(w io.Writer) error { return writeRecord(w, r) })
	}
	all, err := l.List()
	if err != nil {
		return err
	}
	res := EffectsResult{Ledger: l.Dir(), Effects: []*barrier.Record{}}
	for _, r := range all {
		if len(c.State) == 0 || slices.Contains(c.State, string(r.State)) {
			res.Effects = append(res.Effects, r)
		}
	}
	return env.Emit(res, func(w io.Writer) error {
		if len(res.Effects) == 0 {
			_, err := fmt.Fprintf(w, "no effects in %s\n", res.Ledger)
			return err
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "KEY\tSTATE\tFIRST SEEN\tCHECKPOINT\tTOOL_USE_ID\tDESCRIPTION")
		for _, r := range res.Effects {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Key, r.State, r.FirstSeen.Local().Format(time.DateTime),
				dash(r.Checkpoint), dash(r.ToolUseID), dash(oneLine(r.Description, 60)))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		var open []string
		for _, r := range res.Effects {
			if r.State == barrier.Pending || r.State == barrier.Failed {
				open = append(open, r.Key)
			}
		}
		if len(open) > 0 {
			fmt.Fprintf(w, "\n%d pending or failed: check the outside world, then \"agent-rewind release <key> --reason ...\" for those that did not happen (\"agent-rewind effects <key>\" shows a key's history)\n", len(open))
		}
		return nil
	})
}

// writeRecord writes one ledger record and its history for people.
func writeRecord(w io.Writer, r *barrier.Record) error {
	if r == nil {
		return nil
	}
	fmt.Fprintf(w, "key:          %s\n", r.Key)
	fmt.Fprintf(w, "state:        %s (generation %d)\n", r.State, r.Generation)
	fmt.Fprintf(w, "first seen:   %s\n", r.FirstSeen.Local().Format(time.RFC3339))
	fmt.Fprintf(w, "checkpoint:   %s\n", dash(r.Checkpoint))
	fmt.Fprintf(w, "tool_use_id:  %s\n", dash(r.ToolUseID))
	fmt.Fprintf(w, "source:       %s\n", dash(strings.TrimSpace(r.Source+" "+rulePart(r.Rule))))
	fmt.Fprintf(w, "description:  %s\n", dash(r.Description))
	fmt.Fprintf(w, "fingerprint:  %s\n", r.Fingerprint)
	fmt.Fprintln(w, "history:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, t := range r.History {
		from := string(t.From)
		if from == "" {
			from = "new"
		}
		line := fmt.Sprintf("  %s\t%s -> %s\tchain entry %d\tby %s", t.At.Local().Format(time.RFC3339), from, t.To, t.Seq, dash(t.By))
		if t.ToolUseID != "" {
			line += "\ttool " + t.ToolUseID
		}
		if t.Reason != "" {
			line += "\t" + oneLine(t.Reason, 200)
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}

func rulePart(rule string) string {
	if rule == "" {
		return ""
	}
	return "(rule " + rule + ")"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// oneLine folds s onto one line of at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
