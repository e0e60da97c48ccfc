package command

import (
	"fmt"

	"github.com/agent-rewind/rewind/cli/internal/hook"
)

// cliHint says what to do when a command has no usable workspace.
const cliHint = "run agent-rewind in the project's folder, or name it with --workspace DIR"

// choice chooses the command's workspace by the rule every entry point uses (hook.Choose):
// --workspace, else the working directory, standing for its project (the nearest folder at or
// above it with a store, else its repository's top level, else itself), refusing the home
// folder, "/", agents' own folders and plugin caches; --exact-workspace takes the folder itself.
// When the workspace is not the folder named, a line on stderr says which it is and why. The
// choice is made once per command.
func (e *Env) choice() (hook.Choice, error) {
	if e.chosen != nil {
		return *e.chosen, nil
	}
	rule := "the working directory"
	if e.WorkspaceSet {
		rule = "--workspace"
	}
	c, err := hook.Choose([]hook.Source{{Rule: rule, Folder: e.Workspace, Exact: e.ExactWorkspace, OrItself: true}}, cliHint)
	if err != nil {
		return hook.Choice{}, err
	}
	if c.Root != c.Folder {
		fmt.Fprintf(e.Stderr, "agent-rewind: workspace %s (%s; --exact-workspace takes %s alone)\n", c.Root, c.Why(), c.Folder)
	}
	e.chosen = &c
	return c, nil
}

// root is the chosen workspace's root.
func (e *Env) root() (string, error) {
	c, err := e.choice()
	return c.Root, err
}
