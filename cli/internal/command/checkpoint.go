package command

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/agent-rewind/rewind/cli/internal/hook"
	"github.com/agent-rewind/rewind/cli/internal/watch"
	"github.com/agent-rewind/rewind/snapshot"
)

// CheckpointCmd captures the whole workspace.
type CheckpointCmd struct {
	Label string `arg:"" optional:"" help:"A label for the checkpoint, shown by list (default: none)."`
}

// CheckpointOutput is the --json shape of "checkpoint": the module's result (snapshot.CheckpointResult:
// id, time, kind, label, parent, manifest, counts, newObjects, newBytes, hashed, skipped,
// excluded, excludedCount, warnings, walk, chainSeq, elapsedMs; walk is {mode: "full"|"changed",
// paths, mounts, linked, reason}: whether the change watcher's hint was used, and if not, why),
// the store, the workspaceChoice (hook.Report: root, rule, folder, by, why), and error/exitCode when the
// checkpoint was made but something after it failed (such as recording it on the chain).
type CheckpointOutput struct {
	*snapshot.CheckpointResult
	Store string `json:"store"` // the store's folder, outside the workspace ("agent-rewind store")
	// WorkspaceChoice is which folder was checkpointed, and why (docs/agents.md, "Which folder:
	// the rules").
	WorkspaceChoice *hook.Report `json:"workspaceChoice"`
	failure
}

// noteLimit is how many paths a text note names before "and N more".
const noteLimit = 3

// Run checkpoints.
func (c *CheckpointCmd) Run(env *Env) error {
	s, err := openSnapshots(env, true)
	if err != nil {
		return err
	}
	defer s.close()
	res, err := watch.Checkpoint(context.Background(), s.store, s.ws.Root, s.ws.Meta, c.Label, true)
	s.done()
	if res == nil {
		return err
	}
	res.Warnings = append(res.Warnings, gitWarnings(s.ws.Root)...)
	out := &CheckpointOutput{CheckpointResult: res, Store: s.ws.Meta, WorkspaceChoice: env.chosen.Report()}
	return emitResult(env, out, &out.failure, err, func(w io.Writer) error {
		return writeCheckpoint(w, res)
	})
}

// writeCheckpoint prints a checkpoint result: id, label, time, counts, and short notes of what
// was not captured.
func writeCheckpoint(w io.Writer, r *snapshot.CheckpointResult) error {
	label := ""
	if r.Label != "" {
		label = fmt.Sprintf("  %q", r.Label)
	}
	fmt.Fprintf(w, "checkpoint %s%s  %s\n", r.ID, label, localTime(r.Time))
	n := r.Counts
	fmt.Fprintf(w, "  %s, %s, %s, %s; %s newly stored; %s skipped\n",
		plural(n.Files, "file", "files"), plural(n.Dirs, "dir", "dirs"), plural(n.Symlinks, "symlink", "symlinks"),
		byteSize(n.Bytes), byteSize(r.NewBytes), count(n.Skipped))
	if len(r.Skipped) > 0 {
		names := make([]string, 0, len(r.Skipped))
		for _, sk := range r.Skipped {
			names = append(names, fmt.Sprintf("%s (%s)", printable(sk.Path), sk.Reason))
		}
		fmt.Fprintf(w, "  not captured, and never touched by a rewind: %s\n", listSome(names, len(names)))
	}
	if r.ExcludedCount > 0 {
		names := make([]string, 0, len(r.Excluded))
		for _, p := range r.Excluded {
			names = append(names, printable(p))
		}
		fmt.Fprintf(w, "  excluded by %s (not captured, never touched): %s\n", snapshot.IgnoreFile, listSome(names, r.ExcludedCount))
	}
	for _, warn := range r.Warnings {
		fmt.Fprintf(w, "  note: %s\n", warn)
	}
	return nil
}

// listSome names the first noteLimit of items (total in all) and says how many more there are.
func listSome(items []string, total int) string {
	shown := items[:min(len(items), noteLimit)]
	s := strings.Join(shown, ", ")
	if more := total - len(shown); more > 0 {
		s += fmt.Sprintf(" and %s more (see --json)", count(more))
	}
	return s
}
