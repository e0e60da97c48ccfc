package hook

import (
	"context"
	"fmt"

	"github.com/agent-rewind/rewind/cli/internal/watch"
	"github.com/agent-rewind/rewind/cli/internal/workspace"
	"github.com/agent-rewind/rewind/snapshot"
)

// A session's first tool call used to pay for what only the first needs: the workspace's first
// checkpoint (every file read and stored) and the start of its change watcher, whose token the
// next checkpoint needs before it can skip the walk. A person's prompt comes before any tool
// call, and the model takes a while to answer it, so the prompt hook hands both to the guard
// server (Call.Warm), which does them after its answer, off the path the agent waits on; the
// tool calls that follow find a position and a watcher, and cost what an unchanged call costs.

// WarmLabel labels the first checkpoint Warm takes. Like the one a large workspace's first tool
// call starts in the background, it is an ordinary checkpoint: an automatic one names the tool
// call it was taken before, and this one precedes them all.
const WarmLabel = "first checkpoint, taken at the session's first prompt"

// warmIfDue hands root to the guard server's warm-up (Call.Warm) when the store has no position
// or the workspace's watcher may not run; without a server nothing is done here, and the first
// tool call takes the first checkpoint as before.
func (g *guardRun) warmIfDue(ws *workspace.Workspace) {
	if g.warm == nil {
		return
	}
	if _, off, err := autoLimit(); off || err != nil {
		return
	}
	g.warm(ws.Root)
}

// Warm takes root's first checkpoint, when it has none and is small enough for a hook to take
// it (under the automatic checkpoints' size limit and backgroundBytes), with the change watcher
// started first, so that its token is recorded with the checkpoint; when the store has a
// position, it has the watcher vouch for it (watch.Adopt: a stat walk now, none at the next
// call). Either way the next automatic checkpoint reads no file when nothing changed. It gives
// way when another holds the store's lock (a tool call's own checkpoint then needs no
// warm-up), and holds it from its look at the position to its checkpoint. What a guard server
// runs after answering a prompt hook.
func Warm(ctx context.Context, root string) error {
	limit, off, err := autoLimit()
	if off || err != nil {
		return err
	}
	ws, err := workspace.Open(root)
	if err != nil {
		return err
	}
	defer ws.Close()
	watch.Ensure(root, ws.Meta) // started before the lock is taken: its walk holds up no call
	unlock, err := tryLock(ws.Path("lock"), 0)()
	if err != nil {
		return nil
	}
	held := func() (func() error, error) { return func() error { return nil }, nil }
	s, err := snapshot.Open(ws.Root, snapshot.Options{StateDir: ws.Meta, Recorder: ws, Lock: held})
	if err != nil {
		unlock()
		return err
	}
	cur, err := s.Current()
	if err != nil || cur != "" {
		unlock() // Adopt's comparison takes the lock itself, and gives way as this did
		if err != nil {
			return err
		}
		s, err = snapshot.Open(ws.Root, snapshot.Options{StateDir: ws.Meta, Recorder: ws, Lock: tryLock(ws.Path("lock"), 0)})
		if err != nil {
			return err
		}
		return watch.Adopt(ctx, s, root, ws.Meta, cur)
	}
	defer unlock()
	bound := int64(backgroundBytes)
	if limit > 0 && limit < bound {
		bound = limit
	}
	if _, over := treeSizeOver(root, bound); over {
		return nil // the first tool call decides, as before: skipped, or taken in the background
	}
	if _, err := watch.Checkpoint(ctx, s, root, ws.Meta, WarmLabel, true); err != nil {
		return fmt.Errorf("the first checkpoint of %s: %w", root, err)
	}
	return nil
}
