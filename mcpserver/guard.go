package mcpserver

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// GuardResult is the output of the guard_effect tool: the barrier's decision on one key.
// A refusal is a normal result with Admitted false, not a tool error (see the package doc).
type GuardResult struct {
	Admitted bool `json:"admitted"`
	// Code is the barrier's decision code, for example "admitted", "spent" (the key already
	// fired), "payload_mismatch" (the key fired with other parameters) or "pending" (outcome
	// unknown, reconcile first). mcpserver passes it through.
	Code string `json:"code"`
	// Reason says, in words the agent can act on, why the effect was admitted or refused.
	Reason string `json:"reason"`
	Key    string `json:"key"`
	// State is the key's state in the ledger after the decision, for example "spent".
	State string `json:"state"`
	// Next says what to do: perform the effect once, or not at all.
	Next string `json:"next"`
}

func (s *server) guardEffect(ctx context.Context, _ *mcp.CallToolRequest, in GuardRequest) (*mcp.CallToolResult, GuardResult, error) {
	if err := validateGuard(in); err != nil {
		return nil, GuardResult{}, err
	}
	r, err := s.ws.GuardEffect(ctx, in)
	if err != nil {
		return nil, GuardResult{}, s.toolError(toolGuardEffect, err)
	}
	r.Next = "do NOT perform it"
	if r.Admitted {
		r.Next = "perform it once now"
	}
	return textResult(guardText(r)), r, nil
}

// guardText leads with the decision in capitals: a client that shows only text, or a model that
// skims, must not mistake a refusal for a go-ahead.
func guardText(r GuardResult) string {
	if r.Admitted {
		t := fmt.Sprintf("ADMITTED: effect %q is recorded (%s); %s.", r.Key, r.State, r.Next)
		if r.Reason != "" {
			t += " " + r.Reason
		}
		return t
	}
	return fmt.Sprintf("REFUSED (%s): do NOT perform effect %q. %s", r.Code, r.Key, r.Reason)
}
