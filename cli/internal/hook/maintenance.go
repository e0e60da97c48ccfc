package hook

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/agent-rewind/rewind/cli/internal/prompts"
	"github.com/agent-rewind/rewind/cli/internal/workspace"
	"github.com/agent-rewind/rewind/snapshot"
)

// Automatic maintenance (docs/agents.md, "Retention"): after an automatic checkpoint that
// wrote something, when the store says maintenance is due (snapshot.MaintenanceDue: many small
// packs, or the retention not applied for a day), it is handed to the guard server, which runs
// it after its answer, or to a process of its own ("agent-rewind gc --auto"): never in the
// hook's time.

// AutoRetentionEnv names the switch of the retention of automatic checkpoints that maintenance
// applies: "off" keeps every automatic checkpoint (packs are still merged); unset or "on"
// applies it (snapshot.AutoRetention, gc's defaults).
const AutoRetentionEnv = "REWIND_AUTO_RETENTION"

// AutoRetention reads AutoRetentionEnv: the retention maintenance applies, or nil when off.
func AutoRetention() (*snapshot.GCOptions, error) {
	switch v := strings.TrimSpace(os.Getenv(AutoRetentionEnv)); strings.ToLower(v) {
	case "", "on":
		r := snapshot.AutoRetention
		return &r, nil
	case "off":
		return nil, nil
	default:
		return nil, fmt.Errorf("%s=%q: give on or off", AutoRetentionEnv, v)
	}
}

// maintainIfDue hands the store's maintenance on when it is due and none runs: to the guard
// server (Call.Maintain), else to a process of its own. It returns a note ("" when all is well).
func (g *guardRun) maintainIfDue(s *snapshot.Store, root string) autoNote {
	retention, err := AutoRetention()
	if err != nil {
		return autoNote{text: once(err.Error(), "agent-rewind: no automatic maintenance of the store: "+err.Error()), show: true}
	}
	due, err := s.MaintenanceDue(retention != nil)
	if err != nil {
		return autoNote{text: "agent-rewind: no automatic maintenance of the store: " + err.Error() + " (agent-rewind check names what is wrong)"}
	}
	if !due.Any() || s.MaintenanceRunning() {
		return autoNote{}
	}
	if g.maintain != nil {
		g.maintain(root)
		return autoNote{}
	}
	if err := startDetached(root, "gc", "--auto"); err != nil {
		return autoNote{text: "agent-rewind: the store's maintenance (agent-rewind gc --auto) did not start: " + err.Error()}
	}
	return autoNote{}
}

// Maintain runs the maintenance of root's store, as "agent-rewind gc --auto" does: what a
// guard server runs after its answer.
func Maintain(ctx context.Context, root string) (*snapshot.MaintainResult, error) {
	retention, err := AutoRetention()
	if err != nil {
		return nil, err
	}
	ws, err := workspace.Open(root)
	if err != nil {
		return nil, err
	}
	defer ws.Close()
	s, err := ws.Snapshots(nil)
	if err != nil {
		return nil, err
	}
	res, err := s.Maintain(ctx, snapshot.MaintainOptions{Retention: retention})
	if err == nil && res.Retention != nil {
		_, err = prompts.PruneStore(ws.Path(prompts.File), s, retention.AutoKeepWithin)
	}
	return res, err
}
