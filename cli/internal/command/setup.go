package command

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/agent-rewind/rewind/cli/internal/agentconfig"
	"github.com/agent-rewind/rewind/cli/internal/hook"
	"github.com/agent-rewind/rewind/cli/internal/statebase"
)

// SetupCmd writes an agent client's MCP and hook configuration for the project.
type SetupCmd struct {
	Client     string `arg:"" help:"The client: claude-code, codex, cursor, cline, windsurf, vscode, gemini or copilot."`
	User       bool   `help:"Write the files the client reads from your home folder (every project's sessions read them) instead of the project's."`
	DryRun     bool   `name:"dry-run" help:"Show what would change, and change nothing."`
	Remove     bool   `help:"Take out exactly what setup added (entries you changed since are left, and named)."`
	TrustHooks bool   `name:"trust-hooks" help:"codex only: trust agent-rewind's hooks as /hooks does (asks codex app-server for their hashes), so that Codex runs them."`
}

// SetupOutput is the --json shape of "setup": agentconfig.Result and the workspace choice.
type SetupOutput struct {
	*agentconfig.Result
	WorkspaceChoice *hook.Report `json:"workspaceChoice"`
}

// Run plans the client's files, writes them unless --dry-run, and says what changed.
func (c *SetupCmd) Run(env *Env) error {
	client, err := agentconfig.ClientNamed(c.Client)
	if err != nil {
		return err
	}
	if c.TrustHooks && client.Name != "codex" {
		return fmt.Errorf("--trust-hooks is for codex: %s does not ask to trust hooks one by one", client.Facts.Name)
	}
	if c.TrustHooks && c.Remove {
		return errors.New("--trust-hooks and --remove together: --remove already takes out the trust entries setup wrote")
	}
	choice, err := env.choice()
	if err != nil {
		return err
	}
	req, err := setupRequest(client, choice.Root, c.User)
	if err != nil {
		return err
	}
	req.DryRun, req.Remove = c.DryRun, c.Remove
	res, err := agentconfig.Run(req)
	if err != nil {
		return err
	}
	if client.Name == "codex" {
		if err := c.codexTrust(req, res); err != nil {
			return err
		}
	}
	out := SetupOutput{Result: res, WorkspaceChoice: choice.Report()}
	return env.Emit(out, func(w io.Writer) error { return writeSetup(w, out) })
}

// setupRequest is a setup of client for the project root, in the user's folder with user.
func setupRequest(client *agentconfig.Client, root string, user bool) (agentconfig.Request, error) {
	bin, err := agentconfig.FindBinaries()
	if err != nil {
		return agentconfig.Request{}, err
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return agentconfig.Request{}, fmt.Errorf("setup writes into the clients' folders under the home folder: %w (set HOME)", err)
	}
	state, err := statebase.Dir(os.Getenv)
	if err != nil {
		return agentconfig.Request{}, fmt.Errorf("setup keeps what it added in the state folder: %w", err)
	}
	if state, err = filepath.Abs(state); err != nil {
		return agentconfig.Request{}, err
	}
	scope := agentconfig.ScopeProject
	if user {
		scope = agentconfig.ScopeUser
	}
	return agentconfig.Request{Client: client, Scope: scope, Bin: bin, Records: filepath.Join(state, "setup"),
		Loc: agentconfig.Locations{Root: root, Home: home, Getenv: os.Getenv}}, nil
}

// codexTrust trusts agent-rewind's hooks (--trust-hooks), or takes out the trust entries setup
// wrote (--remove).
func (c *SetupCmd) codexTrust(req agentconfig.Request, res *agentconfig.Result) error {
	switch {
	case c.Remove:
		fc, err := agentconfig.UntrustCodexHooks(req)
		if err != nil {
			return err
		}
		res.Files = append(res.Files, fc)
	case c.TrustHooks && c.DryRun:
		res.Notes = append(res.Notes, "--trust-hooks: once the hooks are written, setup asks codex app-server for their hashes and trusts agent-rewind's in "+agentconfig.CodexConfig(req.Loc))
	case c.TrustHooks:
		codex, err := exec.LookPath("codex")
		if err != nil {
			return fmt.Errorf("--trust-hooks asks Codex (codex app-server) for the hooks' hashes, but codex is not on PATH: install it (npm install -g @openai/codex), or trust the hooks with /hooks in a Codex session")
		}
		fc, err := agentconfig.TrustCodexHooks(req, codex)
		if err != nil {
			return fmt.Errorf("--trust-hooks: %w (the hooks themselves were written)", err)
		}
		res.Files = append(res.Files, fc)
		res.Notes = dropTrustNote(res.Notes)
	}
	return nil
}

// dropTrustNote drops the note that tells to trust the hooks, once they are.
func dropTrustNote(notes []string) []string {
	var out []string
	for _, n := range notes {
		if !strings.Contains(n, "--trust-hooks") {
			out = append(out, n)
		}
	}
	return out
}

// writeSetup writes what setup did for people: the project, the programs, then each file with
// its changes, + added, - taken out, = left as it was.
func writeSetup(w io.Writer, out SetupOutput) error {
	r := out.Result
	verb := "setup"
	if r.Remove {
		verb = "setup --remove"
	}
	fmt.Fprintf(w, "agent-rewind %s %s (%s files) for %s\n", verb, r.Client, r.Scope, r.Workspace)
	if ch := out.WorkspaceChoice; ch != nil && ch.Folder != ch.Root {
		fmt.Fprintf(w, "  chosen by %s\n", ch.Why)
	}
	if !r.Remove {
		hookProg := r.Binaries.Hook
		if hookProg == "" {
			hookProg = "not installed: the hooks run " + r.Binaries.Rewind
		}
		fmt.Fprintf(w, "  agent-rewind %s\n  agent-rewind-hook %s\n", r.Binaries.Rewind, hookProg)
	}
	would := ""
	if r.DryRun {
		would = "would "
	}
	for _, f := range r.Files {
		fmt.Fprintf(w, "\n%s%s %s (%s)\n", would, f.Action, f.Path, f.What)
		for _, c := range f.Changes {
			sign := "+"
			if c.Op == "remove" {
				sign = "-"
			}
			fmt.Fprintf(w, "  %s %s %s\n", sign, c.At, indentMore(c.Value))
		}
		for _, k := range f.Kept {
			fmt.Fprintf(w, "  = %s: %s\n", k.At, indentMore(k.Why))
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "\nnote: %s\n", n)
	}
	if r.DryRun {
		fmt.Fprintln(w, "\ndry run: nothing was written")
	} else if !r.Changed() {
		fmt.Fprintln(w, "\nnothing to change")
	}
	return nil
}

// indentMore indents the lines after the first of a multi-line value (a TOML table).
func indentMore(s string) string {
	return strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n      ")
}
