package agentws

import (
	"testing"

	"github.com/agent-rewind/rewind/snapshot"
)

// TestRestoreResultInUse: of the paths a restore kept, those in use (live) are the tool's
// in_use; excluded ones are not news to the agent.
func TestRestoreResultInUse(t *testing.T) {
	r := restoreResult(&snapshot.RestoreResult{To: "t", Kept: []snapshot.Kept{{Path: "server.log", Reason: "in use", Live: true}, {Path: "node_modules", Reason: "excluded"}}})
	if len(r.InUse) != 1 || r.InUse[0] != "server.log" {
		t.Fatalf("in_use = %v, want [server.log]", r.InUse)
	}
}
