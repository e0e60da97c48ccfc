package workspace

import (
	"github.com/agent-rewind/rewind/barrier"
)

// EffectsDir is the effect ledger's directory in the store (barrier/doc.go).
const EffectsDir = "effects"

// Ledger opens the workspace's effect ledger, recording every admission, confirmation, refusal
// and release on the chain. Opening does no I/O: a guard that decides nothing touches nothing.
func (w *Workspace) Ledger() (*barrier.Ledger, error) {
	return barrier.Open(w.Path(EffectsDir), w)
}
