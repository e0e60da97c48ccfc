package agentws

import (
	"context"
	"errors"
	"io/fs"
	"os"

	"github.com/agent-rewind/rewind/gateway"
	"github.com/agent-rewind/rewind/mcpserver"
)

// SavingsFile is the gateway's replay-savings receipt in the store (format: gateway/doc.go).
const SavingsFile = gateway.SavingsFileName

// NoSavingsNote is the savings note when the workspace has no receipt.
const NoSavingsNote = "no replay savings recorded: the gateway has not replayed any call in this workspace"

// Savings implements mcpserver.Workspace: the gateway's receipt, read with the gateway's own
// reader. With no receipt it returns zeros and NoSavingsNote; a damaged receipt is an error.
func (w *Workspace) Savings(context.Context) (mcpserver.SavingsResult, error) {
	ws, err := w.open(false)
	if err != nil {
		return mcpserver.SavingsResult{}, err
	}
	if ws == nil {
		return mcpserver.SavingsResult{Note: NoSavingsNote}, nil
	}
	name := ws.Path(SavingsFile)
	if _, err := os.Lstat(name); errors.Is(err, fs.ErrNotExist) {
		return mcpserver.SavingsResult{Note: NoSavingsNote}, nil
	}
	s, err := gateway.LoadSavings(name)
	if err != nil {
		return mcpserver.SavingsResult{}, err
	}
	return mcpserver.SavingsResult{
		ReplayedCalls:  s.ReplayedCalls,
		AvoidedTokens:  s.AvoidedTokens.Input + s.AvoidedTokens.Output + s.AvoidedTokens.CacheRead + s.AvoidedTokens.CacheWrite,
		AvoidedCostUSD: s.AvoidedCostUSD,
		Note:           s.Note,
	}, nil
}
