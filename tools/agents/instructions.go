package agents

import (
	"context"
	"os/exec"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServerInstructions starts an MCP server (command in dir, with the Env's environment) as a
// client would, and returns the instructions it sends on initialize: what a test then looks
// for in what the client sent the model. A server that does not start fails the test.
func (e *Env) ServerInstructions(dir string, command ...string) string {
	e.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Dir, cmd.Env = dir, e.Environ()
	client := mcp.NewClient(&mcp.Implementation{Name: "agents-harness", Version: "1"}, nil)
	s, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		e.T.Fatalf("MCP server %v in %s: %v", command, dir, err)
	}
	defer s.Close()
	return s.InitializeResult().Instructions
}
