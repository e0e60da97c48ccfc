package agents

import (
	"context"
	"os/exec"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServerInstructions starts an MCP server (command and args) in dir with the Env's environment,
// initializes it as a client would, and returns the instructions it sent: what a client should
// put in the model's system prompt.
func (e *Env) ServerInstructions(dir string, command string, args ...string) string {
	e.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.Command(command, args...)
	cmd.Dir, cmd.Env = dir, e.Environ()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agents-harness", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		e.T.Fatalf("initialize the MCP server %s %v in %s: %v", command, args, dir, err)
	}
	defer cs.Close()
	return cs.InitializeResult().Instructions
}
