package watch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/agent-rewind/rewind/snapshot"
)

// EnvVar turns the watcher off when set to "off": checkpoints then walk the tree and start none.
const EnvVar = "REWIND_WATCH"

// Checkpoint checkpoints store s (of workspace root, whose store folder is store) with the
// watcher's hint when there is one to trust, and records the watcher's token with the new
// checkpoint. With start, a watcher is started when none runs ("agent-rewind watch run": only
// the agent-rewind binary itself may pass it). The result's Walk says whether the hint was used,
// and if not, why.
func Checkpoint(ctx context.Context, s *snapshot.Store, root, store, label string, start bool) (*snapshot.CheckpointResult, error) {
	cur, err := s.Current()
	if err != nil {
		return nil, err
	}
	hint, token, why := hintFor(root, store, cur, start)
	res, err := s.CheckpointChanged(ctx, label, hint)
	if res == nil {
		return nil, err
	}
	if res.Walk.Mode == "full" && res.Walk.Reason == "" {
		res.Walk.Reason = why
	}
	if token != "" {
		if werr := WritePosition(store, res.ID, token); werr != nil {
			res.Warnings = append(res.Warnings, fmt.Sprintf("the watcher's position was not saved (%v): the next checkpoint walks the tree", werr))
		}
	}
	return res, err
}

// hintFor asks the workspace's watcher, starting one if none runs and start is set, what changed
// since checkpoint current. It returns the hint (nil: walk the tree, and why) and the token to
// record with the checkpoint once taken.
func hintFor(root, store, current string, start bool) (hint *snapshot.Changed, token, why string) {
	if !Supported {
		return nil, "", "no change watcher on this system"
	}
	if os.Getenv(EnvVar) == "off" {
		return nil, "", EnvVar + "=off"
	}
	hint, token, why, err := Hint(store, current)
	if errors.Is(err, ErrNotRunning) && start {
		if _, err := Start(store, root, 5*time.Second); err != nil {
			return nil, "", fmt.Sprintf("no watcher was running, and starting one failed: %v", err)
		}
		hint, token, why, err = Hint(store, current)
		if err == nil {
			why = "a watcher was started now; " + why
		}
	}
	if err != nil {
		return nil, "", why
	}
	return hint, token, why
}
