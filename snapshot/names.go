package snapshot

import (
	"fmt"
	"strings"

	"github.com/agent-rewind/rewind/snapshot/internal/platform"
)

// namesShown is how many of the paths a system cannot hold a refusal names.
const namesShown = 5

// checkNames refuses a restore from checkpoint id of entries (in manifest order) holding names
// this system cannot hold (platform.WindowsBadNames on Windows), before anything is changed:
// otherwise the restore would stop part way, or write one file over another that differs only
// by case. The error names the first few and says what to do.
func checkNames(id string, entries []Entry) error {
	if !platform.RestrictsNames {
		return nil
	}
	paths := make([]string, len(entries))
	for i := range entries {
		paths[i] = entries[i].Path
	}
	bad := platform.WindowsBadNames(paths)
	if len(bad) == 0 {
		return nil
	}
	var b strings.Builder
	for i, n := range bad[:min(len(bad), namesShown)] {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%q %s", n.Path, n.Why)
	}
	if more := len(bad) - namesShown; more > 0 {
		fmt.Fprintf(&b, "; and %d more", more)
	}
	return fmt.Errorf("%w: checkpoint %s holds %d path(s) Windows cannot hold, so nothing was changed: %s. Rename them on the system that made the checkpoint and checkpoint there again, or restore only other paths (agent-rewind restore %s -- PATH...)", ErrNameNotHeld, id, len(bad), b.String(), id)
}
