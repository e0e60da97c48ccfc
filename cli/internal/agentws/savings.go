package agentws

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agent-rewind/rewind/cli/internal/workspace"
	"github.com/agent-rewind/rewind/mcpserver"
)

// SavingsFile is the gateway's replay-savings receipt in .rewind/. The gateway module writes it
// and owns its format; this file only knows whether it is there.
const SavingsFile = "savings.json"

// NoSavingsNote is the savings note when the workspace has no receipt.
const NoSavingsNote = "no replay savings recorded: the gateway has not replayed any call in this workspace"

// Savings implements mcpserver.Workspace. With no receipt it returns zeros and NoSavingsNote.
// Reading a receipt is the gateway module's job: until this is wired to its reader, a receipt
// that exists is reported as an error rather than guessed at.
func (w *Workspace) Savings(context.Context) (mcpserver.SavingsResult, error) {
	name := filepath.Join(w.root, workspace.MetaDir, SavingsFile)
	_, err := os.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return mcpserver.SavingsResult{Note: NoSavingsNote}, nil
	}
	if err != nil {
		return mcpserver.SavingsResult{}, fmt.Errorf("read the gateway's receipt: %w", err)
	}
	return mcpserver.SavingsResult{}, fmt.Errorf("%s exists, but this build of agent-rewind cannot read the gateway's receipt yet (the savings tool is not wired to the gateway module): read the file itself, or upgrade agent-rewind", name)
}
