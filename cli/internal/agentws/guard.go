package agentws

import (
	"context"
	"errors"
	"fmt"

	"github.com/agent-rewind/rewind/barrier"
	"github.com/agent-rewind/rewind/mcpserver"
)

// GuardSource is the Source the MCP guard_effect tool gives the barrier.
const GuardSource = "mcp"

// guardNewKeyHint tells the agent, in a refusal, how to name a distinct new effect.
const guardNewKeyHint = "call guard_effect with a new key"

// GuardEffect implements mcpserver.Workspace: it asks the effect ledger (effects/ in the store) to
// admit req.Key, with the current checkpoint, as a request that cannot be confirmed later (so an
// admitted key is spent at once). A refusal is a result with Admitted false; an error means the
// effect was not admitted either.
func (w *Workspace) GuardEffect(_ context.Context, req mcpserver.GuardRequest) (mcpserver.GuardResult, error) {
	ws, s, err := w.snapshots(true)
	if err != nil {
		return mcpserver.GuardResult{}, notAdmitted(req.Key, err)
	}
	cur, err := s.Current()
	if err != nil {
		return mcpserver.GuardResult{}, notAdmitted(req.Key, err)
	}
	l, err := ws.Ledger()
	if err != nil {
		return mcpserver.GuardResult{}, notAdmitted(req.Key, err)
	}
	d, err := l.Admit(barrier.Request{
		Key: req.Key, Payload: req.Payload, Description: req.Description,
		Checkpoint: cur, Source: GuardSource, NewKeyHint: guardNewKeyHint,
	})
	if err != nil {
		if d.Refused() && errors.Is(err, barrier.ErrNotRecorded) {
			return mcpserver.GuardResult{}, fmt.Errorf("effect %q is refused (%s), do NOT perform it: %s; and recording the refusal on the hash chain failed: %w", req.Key, d.Code, d.Reason, err)
		}
		return mcpserver.GuardResult{}, notAdmitted(req.Key, err)
	}
	key := d.Key
	if key == "" {
		key = req.Key
	}
	return mcpserver.GuardResult{Admitted: d.Admitted, Code: string(d.Code), Reason: d.Reason, Key: key, State: string(d.State)}, nil
}

// notAdmitted says that an effect the barrier could not decide must not be performed.
func notAdmitted(key string, err error) error {
	return fmt.Errorf("effect %q was not admitted, do NOT perform it yet: %w", key, err)
}
