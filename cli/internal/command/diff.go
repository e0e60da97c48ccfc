package command

import (
	"context"
	"fmt"
	"io"

	"github.com/agent-rewind/rewind/snapshot"
)

// DiffCmd compares a checkpoint with the live workspace, or two checkpoints.
type DiffCmd struct {
	A string `arg:"" help:"The older side: a checkpoint id or unique prefix."`
	B string `arg:"" optional:"" help:"The newer side: a checkpoint id or unique prefix (default: the live workspace)."`
}

// DiffOutput is the --json shape of "diff": the module's result (snapshot.DiffResult: from, to
// ("" for the live workspace), changes [{path, kind, from, to}], warnings) and the changes counted
// by kind.
type DiffOutput struct {
	*snapshot.DiffResult
	Counts ChangeCounts `json:"counts"`
}

// Run diffs. It takes no lock and writes nothing (the live side is hashed, not stored).
func (c *DiffCmd) Run(env *Env) error {
	s, err := openSnapshots(env, false)
	if err != nil {
		return err
	}
	defer s.close()
	res, err := s.store.Diff(context.Background(), c.A, c.B)
	s.done()
	if err != nil {
		return s.resolveError(err)
	}
	out := &DiffOutput{DiffResult: res, Counts: countChanges(res.Changes)}
	return env.Emit(out, func(w io.Writer) error {
		to := "the live workspace"
		if res.To != "" {
			to = "checkpoint " + res.To
		}
		fmt.Fprintf(w, "checkpoint %s -> %s: %s\n", res.From, to, out.Counts)
		writeChanges(w, res.Changes, 0)
		for _, warn := range res.Warnings {
			fmt.Fprintf(w, "note: %s\n", warn)
		}
		return nil
	})
}
