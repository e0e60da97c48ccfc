package mcpserver

import "strings"

// Instructions returns the server instructions sent on initialize for profile p: the workflow in
// a few lines, naming only the tools p exposes. Clients put them in the model's context, so every
// word costs on every turn.
func Instructions(p Profile) string {
	var lines []string
	if p.Has(toolCheckpoint) {
		lines = append(lines,
			"agent-rewind makes this workspace reversible.",
			"Before risky work, call checkpoint and keep the id.",
			"If it goes wrong, rewind to it.")
	}
	if p.Has(toolBacktrackCommit) {
		lines = append(lines,
			"After a failed approach: backtrack_candidates, then backtrack_commit with what failed; notes survive rewinds.")
	}
	if p.Has(toolGuardEffect) {
		lines = append(lines,
			"Before an irreversible external action (deploy, payment, email), call guard_effect with a stable key; if refused, do not do it.",
			"Rewind restores files, not the outside world. It is not a sandbox.")
	}
	if p.Has(toolSavings) {
		lines = append(lines, "savings: the gateway's savings.")
	}
	return strings.Join(lines, "\n")
}
