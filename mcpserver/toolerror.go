package mcpserver

import (
	"errors"
	"fmt"
)

// ToolError is a Workspace failure as the agent sees it: the tool's name, the Workspace's error,
// and a next step. It becomes the text of a tool error result (isError); errors.Is and errors.As
// reach the Workspace's error through Unwrap.
type ToolError struct {
	Tool string // the tool that failed
	Err  error  // the Workspace's error
	Hint string // what to do next
}

func (e *ToolError) Error() string {
	return fmt.Sprintf("%s failed: %v. %s", e.Tool, e.Err, e.Hint)
}

func (e *ToolError) Unwrap() error { return e.Err }

// toolError wraps a Workspace error with a next step that fits the error and the profile (it
// only names tools the agent can call).
func (s *server) toolError(tool string, err error) error {
	var hint string
	switch {
	case errors.Is(err, ErrUnknownCheckpoint):
		hint = "Use an id that checkpoint returned"
		if s.profile.Has(toolList) {
			hint += ", or call list to see the timeline"
		}
		hint += "."
	case errors.Is(err, ErrBusy):
		hint = "Another agent-rewind command holds the workspace; wait a moment and call " + tool + " again."
	default:
		hint = "Fix what the message names, then call " + tool + " again."
	}
	return &ToolError{Tool: tool, Err: err, Hint: hint}
}
