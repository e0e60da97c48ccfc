package command

import (
	"fmt"
	"io"

	"github.com/agent-rewind/rewind/cli/internal/workspace"
)

// OrphansOutput is the --json shape of "gc --orphans": every orphan store found (removed
// unless dryRun), and the bytes freed.
type OrphansOutput struct {
	DryRun     bool               `json:"dryRun"`
	Orphans    []workspace.Orphan `json:"orphans"` // id, root, identity, created, dir, bytes, reason, ...
	BytesFreed int64              `json:"bytesFreed"`
}

// gcOrphans lists the stores whose workspace is gone and, unless dryRun, removes them. It
// needs no workspace: it looks at every store in the state folder.
func gcOrphans(env *Env, dryRun bool) error {
	orphans, err := workspace.Orphans()
	if err != nil {
		return err
	}
	out := OrphansOutput{DryRun: dryRun, Orphans: []workspace.Orphan{}}
	for _, o := range orphans {
		if !dryRun {
			if err := workspace.RemoveOrphan(o); err != nil {
				return fmt.Errorf("remove store %s: %w", o.ID, err)
			}
			out.BytesFreed += o.Bytes
		}
		out.Orphans = append(out.Orphans, o)
	}
	return env.Emit(out, func(w io.Writer) error {
		verb := "removed"
		if dryRun {
			verb = "would remove"
		}
		if len(out.Orphans) == 0 {
			fmt.Fprintln(w, "no orphan stores: every store's workspace is where it was")
			return nil
		}
		for _, o := range out.Orphans {
			fmt.Fprintf(w, "%s store %s (%s, workspace %s): %s\n", verb, o.ID, byteSize(o.Bytes), o.Root, o.Reason)
		}
		if dryRun {
			fmt.Fprintln(w, "dry run: nothing was removed; to keep one, run \"agent-rewind store --adopt ID\" in its workspace's new folder")
		}
		return nil
	})
}
