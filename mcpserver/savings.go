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
	ReplayedCalls  int64       `json:"replayed_calls"`
	AvoidedTokens  TokenCounts `json:"avoided_tokens"`
	AvoidedCostUSD float64     `json:"avoided_cost_usd"`
	Note           string      `json:"note"`
}

// TokenCounts counts tokens by kind, as providers bill them.
type TokenCounts struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cache_read"`
	CacheWrite int64 `json:"cache_write"`
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
	t := r.AvoidedTokens
	return fmt.Sprintf("Replay savings: %d calls replayed; tokens avoided: %d input, %d output, %d cache read, %d cache write; about $%.4f avoided. Note: %s.",
		r.ReplayedCalls, t.Input, t.Output, t.CacheRead, t.CacheWrite, r.AvoidedCostUSD, strings.TrimRight(r.Note, ". "))
}
