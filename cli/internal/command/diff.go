package command

import (
	"context"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/agent-rewind/rewind/snapshot"
)

// DiffCmd compares a checkpoint with the live workspace, or two checkpoints.
type DiffCmd struct {
	A string `arg:"" help:"The older side: a checkpoint id or unique prefix."`
	B string `arg:"" optional:"" help:"The newer side: a checkpoint id or unique prefix (default: the live workspace)."`
}

// DiffOutput is the --json shape of "diff": the module's result (snapshot.DiffResult: from, to
// ("" for the live workspace), changes [{path, kind, from, to, pathBytes}], warnings) and the
// changes counted by kind.
type DiffOutput struct {
	*snapshot.DiffResult
	Changes []DiffChange `json:"changes"`
	Counts  ChangeCounts `json:"counts"`
}

// DiffChange is a change as diff --json writes it. A path that is not valid UTF-8 (Linux allows
// any bytes but '/' and NUL) cannot be a JSON string as it is: path then holds it with each
// invalid byte replaced by U+FFFD, for reading, and pathBytes holds its exact bytes in standard
// base64, so that it can be recovered. pathBytes is absent for every other path.
type DiffChange struct {
	snapshot.Change
	PathBytes []byte `json:"pathBytes,omitempty"`
}

// diffChanges adds pathBytes where a path needs it.
func diffChanges(cs []snapshot.Change) []DiffChange {
	out := make([]DiffChange, len(cs))
	for i, c := range cs {
		out[i].Change = c
		if !utf8.ValidString(c.Path) {
			out[i].PathBytes = []byte(c.Path)
		}
	}
	return out
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
	out := &DiffOutput{DiffResult: res, Changes: diffChanges(res.Changes), Counts: countChanges(res.Changes)}
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
