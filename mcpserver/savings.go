package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SavingsResult is the output of the savings tool: the gateway's replay-savings receipt. It
// counts only calls the gateway answered from a recording instead of the provider; when the
// gateway has never run it is all zeros with a Note saying so.
type SavingsResult struct {
	ReplayedCalls int64 `json:"replayed_calls"`
	// AvoidedTokens counts every kind of token together (input, output, cache reads and
	// writes); the cost already weighs them by kind. The receipt itself (agent-rewind savings
	// --json) has them by kind and model: an agent needs the total, and every field here is in
	// its context on every turn.
	AvoidedTokens  int64   `json:"avoided_tokens"`
	AvoidedCostUSD float64 `json:"avoided_cost_usd"`
	Note           string  `json:"note"`
}

// SavingsNote is the note every receipt carries when the Workspace gives none: the receipt's
// scope, stated so no one reads it as a bill.
const SavingsNote = "replay savings only"

func (s *server) savings(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, SavingsResult, error) {
	r, err := s.ws.Savings(ctx)
	if err != nil {
		return nil, SavingsResult{}, s.toolError(toolSavings, err)
	}
	if r.Note == "" {
		r.Note = SavingsNote
	}
	return textResult(savingsText(r)), r, nil
}

func savingsText(r SavingsResult) string {
	return fmt.Sprintf("Replay savings: %d calls replayed, %d tokens and about $%.4f avoided. Note: %s.",
		r.ReplayedCalls, r.AvoidedTokens, r.AvoidedCostUSD, strings.TrimRight(r.Note, ". "))
}
