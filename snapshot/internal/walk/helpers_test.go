package walk

import (
	"context"

	"github.com/agent-rewind/rewind/snapshot/internal/workspacetest"
)

var ctx = context.Background()

// The workspace helpers the module's tests share.
var (
	put      = workspacetest.Put
	needTool = workspacetest.NeedTool
	sh       = workspacetest.Sh
)
