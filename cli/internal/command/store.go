package command

import (
	"fmt"
	"io"
	"time"

	"github.com/agent-rewind/rewind/cli/internal/hook"
	"github.com/agent-rewind/rewind/cli/internal/workspace"
)

// StoreCmd prints where the workspace's store is, or adopts an earlier folder's store.
type StoreCmd struct {
	Adopt string `placeholder:"ID" help:"Continue the history of store ID in this workspace: for a folder deleted and made again at the same path, or moved across file systems, the store becomes this folder's; for a copy of a workspace that still exists, this folder gets a store of its own that begins as a copy of ID's (the message, the error or gc --orphans --dry-run names the id)."`
}

// StoreOutput is the --json shape of "store".
type StoreOutput struct {
	Workspace    string             `json:"workspace"`              // the workspace root
	Store        string             `json:"store"`                  // the store's folder
	ID           string             `json:"id"`                     // the store's id ("" for a legacy store not moved yet)
	StateDir     string             `json:"stateDir"`               // the folder of every store
	Anchor       string             `json:"anchor"`                 // the chain's anchor file
	Identity     workspace.Identity `json:"identity"`               // the workspace folder's identity
	Bytes        int64              `json:"bytes"`                  // the store's size on disk
	Created      time.Time          `json:"created,omitzero"`       // when the store was made
	MigratedFrom string             `json:"migratedFrom,omitempty"` // the .rewind/ folder it was moved out of
	Adopted      bool               `json:"adopted,omitempty"`      // --adopt bound it to this folder now
	ForkedFrom   string             `json:"forkedFrom,omitempty"`   // the store whose history this one began as a copy of
	Offered      string             `json:"offered,omitempty"`      // the store whose history "store --adopt" would continue here
	// WorkspaceChoice is which folder was chosen as the workspace, and why: the rule every
	// entry point follows (docs/agents.md, "Which folder: the rules").
	WorkspaceChoice *hook.Report `json:"workspaceChoice"`
}

// Run prints the store (creating nothing), or adopts one.
func (c *StoreCmd) Run(env *Env) error {
	choice, err := env.choice()
	if err != nil {
		return err
	}
	var ws *workspace.Workspace
	if c.Adopt != "" {
		ws, err = workspace.Adopt(choice.Root, c.Adopt)
	} else {
		ws, err = workspace.Open(choice.Root)
	}
	if err != nil {
		return err
	}
	defer ws.Close()
	anchor, _ := ws.ChainAnchor()
	out := StoreOutput{
		Workspace: ws.Root, Store: ws.Meta, ID: ws.ID, StateDir: ws.Base, Anchor: anchor, Identity: ws.Identity,
		Bytes: workspace.DirSize(ws.Meta), Created: ws.Info.Created, MigratedFrom: ws.Info.MigratedFrom, Adopted: c.Adopt != "",
		ForkedFrom: ws.Info.ForkedFrom, Offered: ws.Info.Offered, WorkspaceChoice: choice.Report(),
	}
	return env.Emit(out, func(w io.Writer) error {
		switch {
		case out.Adopted && out.ForkedFrom == c.Adopt:
			fmt.Fprintf(w, "the history of store %s continues here, in store %s, a copy of it (its own folder keeps store %s)\n", c.Adopt, out.ID, c.Adopt)
		case out.Adopted:
			fmt.Fprintf(w, "store %s now belongs to %s: its history continues here\n", out.ID, out.Workspace)
		case out.Offered != "":
			fmt.Fprintf(w, "this folder's history began here; to continue store %s's instead: agent-rewind store --adopt %s\n", out.Offered, out.Offered)
		}
		fmt.Fprintf(w, "store      %s\n", out.Store)
		fmt.Fprintf(w, "id         %s\n", out.ID)
		fmt.Fprintf(w, "workspace  %s (%s)\n", out.Workspace, out.Identity)
		fmt.Fprintf(w, "chosen by  %s\n", out.WorkspaceChoice.Why)
		fmt.Fprintf(w, "size       %s\n", byteSize(out.Bytes))
		if !out.Created.IsZero() {
			fmt.Fprintf(w, "created    %s\n", localTime(out.Created))
		}
		if out.MigratedFrom != "" {
			fmt.Fprintf(w, "moved from %s\n", out.MigratedFrom)
		}
		if out.ForkedFrom != "" {
			fmt.Fprintf(w, "copied from store %s\n", out.ForkedFrom)
		}
		return nil
	})
}
