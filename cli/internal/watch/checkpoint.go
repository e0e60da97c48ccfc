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
// "on" turns it on where it is off by default (Windows: OnByDefault).
const EnvVar = "REWIND_WATCH"

// Off says why checkpoints do not use a watcher here, or "" when they do.
func Off() string {
	switch v := os.Getenv(EnvVar); {
	case !Supported:
		return "no change watcher on this system"
	case v == "off":
		return EnvVar + "=off"
	case !OnByDefault && v != "on":
		return "the watcher is off by default on this system (" + EnvVar + "=on turns it on)"
	}
	return ""
}

// Checkpoint checkpoints store s (of workspace root, whose store folder is store) with the
// watcher's hint when there is one to trust, and records the watcher's token with the new
// checkpoint. With start, a watcher is started when none runs ("agent-rewind watch run": only
// the agent-rewind binary itself may pass it). The result's Walk says whether the hint was used,
// and if not, why.
func Checkpoint(ctx context.Context, s *snapshot.Store, root, store, label string, start bool) (*snapshot.CheckpointResult, error) {
	wait := time.Duration(0)
	if start {
		wait = startWait
	}
	cur, err := s.Current()
	if err != nil {
		return nil, err
	}
	return checkpointWith(root, store, cur, start, wait, func(hint *snapshot.Changed) (*snapshot.CheckpointResult, error) {
		return s.CheckpointChanged(ctx, label, hint)
	})
}

// AutoCheckpoint is Checkpoint for the automatic checkpoint before a tool call
// (snapshot.AutoCheckpoint: an unchanged workspace reuses the current position, and with the
// watcher's hint that costs no walk at all). A hook must not wait for a watcher to start: with
// start, one is started in the background and this checkpoint walks the tree. current is the
// store's current position (Store.Current), which the caller has read.
func AutoCheckpoint(ctx context.Context, s *snapshot.Store, root, store, current string, call snapshot.ToolCall, start bool) (*snapshot.CheckpointResult, error) {
	return checkpointWith(root, store, current, start, 0, func(hint *snapshot.Changed) (*snapshot.CheckpointResult, error) {
		return s.AutoCheckpoint(ctx, call, hint)
	})
}

// startWait is how long a checkpoint waits for a watcher it started to answer.
const startWait = 5 * time.Second

// checkpointWith runs take with the watcher's hint since cur, the current position, and records
// the watcher's token with the checkpoint it returns. (take checks the hint against the position
// under the store's lock.)
func checkpointWith(root, store, cur string, start bool, wait time.Duration, take func(*snapshot.Changed) (*snapshot.CheckpointResult, error)) (*snapshot.CheckpointResult, error) {
	hint, token, why := hintFor(root, store, cur, start, wait)
	res, err := take(hint)
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
// record with the checkpoint once taken. A watcher that does not answer (stopped, hung, dying)
// is ended and, with start, replaced: a checkpoint never waits on it twice.
func hintFor(root, store, current string, start bool, wait time.Duration) (hint *snapshot.Changed, token, why string) {
	if why := Off(); why != "" {
		return nil, "", why
	}
	hint, token, why, err := Hint(store, root, current)
	switch {
	case err == nil || !start:
		return hint, token, why
	case errors.Is(err, ErrNotRunning):
		why = "no watcher was running"
	default:
		if eerr := endUnanswering(store, root); eerr != nil {
			return nil, "", fmt.Sprintf("%s, and it could not be replaced: %v", why, eerr)
		}
		why += ": it was ended"
	}
	if wait == 0 {
		if err := startDetached(root, store); err != nil {
			return nil, "", fmt.Sprintf("%s, and starting one failed: %v", why, err)
		}
		return nil, "", why + ": one was started in the background for the next checkpoints"
	}
	if _, err := Start(store, root, wait); err != nil {
		return nil, "", fmt.Sprintf("%s, and starting one failed: %v", why, err)
	}
	hint, token, why2, err := Hint(store, root, current)
	if err != nil {
		return nil, "", why + "; a new one was started but did not answer: " + why2
	}
	return hint, token, why + "; a watcher was started now; " + why2
}

// Adopt makes the workspace's watcher vouch for the current position cur, so that the next
// checkpoint takes its hint instead of walking the tree: what a watcher started after cur was
// taken costs the first checkpoint after it, paid ahead (the guard server's warm-up after a
// prompt). It starts a watcher when none runs and waits for it; the watcher's token is read
// before the workspace is compared with cur (Store.Unchanged, a stat walk), so whatever changes
// meanwhile is in the watcher's next answer, and it is recorded only when the two are equal.
func Adopt(ctx context.Context, s *snapshot.Store, root, store, cur string) error {
	if Off() != "" || cur == "" {
		return nil
	}
	hint, token, _ := hintFor(root, store, cur, true, startWait)
	if hint != nil || token == "" {
		return nil // already vouched for, or no watcher answers: the next checkpoint walks
	}
	same, err := s.Unchanged(ctx, cur)
	if err != nil || !same {
		return err
	}
	return WritePosition(store, cur, token)
}

// Restored runs move, a rewind or replay of store s's workspace, with the running watcher's
// hint of what changed since the current position (nil when there is none to trust: the move's
// safety checkpoint then walks the tree, and its Walk.Reason says why), and has the watcher vouch
// for the position it leaves: the watcher's token, read before move begins, is recorded against
// the checkpoint moved to, so the next checkpoint looks only at what the watcher saw change since
// (what the move wrote, and whatever else changed meanwhile) instead of walking the tree.
// Everything the move left as it was equalled that checkpoint when the move looked, which was
// after the token. No watcher running: both walk, as before.
func Restored(s *snapshot.Store, move func(hint *snapshot.Changed) (*snapshot.RestoreResult, error)) (*snapshot.RestoreResult, error) {
	store, root := s.StateDir(), s.Root()
	var hint *snapshot.Changed
	token, why := "", ""
	if why = Off(); why != "" {
	} else if cur, err := s.Current(); err == nil {
		hint, token, why, _ = Hint(store, root, cur)
	}
	res, err := move(hint)
	if res == nil {
		return res, err
	}
	if sr := res.SafetyResult; sr != nil && sr.Walk.Mode == "full" && sr.Walk.Reason == "" {
		sr.Walk.Reason = why
	}
	if err == nil && !res.DryRun && res.To != "" && token != "" {
		WritePosition(store, res.To, token) // not written: the next checkpoint walks
	}
	return res, err
}
