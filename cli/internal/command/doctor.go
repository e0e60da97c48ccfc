package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/agent-rewind/rewind/cli/internal/agentconfig"
	"github.com/agent-rewind/rewind/cli/internal/hook"
	"github.com/agent-rewind/rewind/cli/internal/hookserver"
	"github.com/agent-rewind/rewind/cli/internal/watch"
	"github.com/agent-rewind/rewind/cli/internal/workspace"
	"github.com/agent-rewind/rewind/hashchain"
)

// DoctorCmd checks, for the folder it runs in, everything agent-rewind needs to protect it.
type DoctorCmd struct{}

// DoctorOutput is the --json shape of "doctor" (docs/agents.md, "agent-rewind doctor").
type DoctorOutput struct {
	OK              bool                       `json:"ok"` // no problem found: exit 0
	Workspace       string                     `json:"workspace"`
	WorkspaceChoice *hook.Report               `json:"workspaceChoice"`
	Store           DoctorStore                `json:"store"`
	GuardServer     HookServerStatusOutput     `json:"guardServer"`
	Watcher         *WatchStatusOutput         `json:"watcher"` // null when there is no store yet
	Chain           *DoctorChain               `json:"chain"`   // null when there is no store yet
	Clients         []agentconfig.ClientReport `json:"clients"`
	Problems        []agentconfig.Problem      `json:"problems"` // every problem, each with the command that fixes it
	Notes           []string                   `json:"notes"`
}

// DoctorStore is the workspace's store and the disk it uses.
type DoctorStore struct {
	Exists        bool   `json:"exists"`
	Path          string `json:"path,omitempty"`
	ID            string `json:"id,omitempty"`
	StateDir      string `json:"stateDir"`
	Bytes         int64  `json:"bytes"`         // the store's size on disk
	StateDirBytes int64  `json:"stateDirBytes"` // every store's, the state folder's whole size
}

// DoctorChain is the chain's state, as chain verify finds it.
type DoctorChain struct {
	OK      bool   `json:"ok"`
	Size    int64  `json:"size"`
	Problem string `json:"problem,omitempty"` // why it does not verify
	Gaps    int    `json:"gaps"`              // entries the chain and the store disagree on
}

// Run checks, prints, and exits 1 when anything is wrong.
func (c *DoctorCmd) Run(env *Env) error {
	choice, err := env.choice()
	if err != nil {
		return err
	}
	out := DoctorOutput{Workspace: choice.Root, WorkspaceChoice: choice.Report(), Clients: []agentconfig.ClientReport{}, Problems: []agentconfig.Problem{}, Notes: []string{}}
	problem := func(p, fix string) { out.Problems = append(out.Problems, agentconfig.Problem{Problem: p, Fix: fix}) }
	doctorStore(&out, problem)
	if socket, err := hookSocket(); err == nil {
		st, err := hookserver.StatusOf(socket)
		out.GuardServer = HookServerStatusOutput{Running: st != nil, Socket: socket, Status: st}
		if err != nil && !errors.Is(err, hookserver.ErrNotRunning) {
			problem("the guard server on "+socket+" does not answer: "+err.Error(), "agent-rewind hook-server stop (the next hook call starts a new one)")
		}
	} else {
		problem(err.Error(), "set HOME, or an absolute REWIND_STATE_DIR")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return fmt.Errorf("doctor reads the clients' folders under the home folder: %w (set HOME)", err)
	}
	loc := agentconfig.Locations{Root: choice.Root, Home: home, Getenv: os.Getenv}
	codex, _ := exec.LookPath("codex")
	runs := programCheck()
	found := false
	for _, cl := range agentconfig.Clients() {
		r := agentconfig.Inspect(cl, loc, runs)
		agentconfig.TrustProblems(cl, loc, &r, codex)
		found = found || r.Found
		out.Clients = append(out.Clients, r)
		out.Problems = append(out.Problems, r.Problems...)
	}
	if !found {
		problem("no agent client is set up for "+choice.Root+": no client file here or in your home folder names agent-rewind's hooks or MCP server",
			"agent-rewind setup CLIENT ("+strings.Join(agentconfig.ClientNames(), ", ")+"), or the Claude Code plugin (integrations/claude-code)")
	}
	out.OK = len(out.Problems) == 0
	if err := env.Emit(out, func(w io.Writer) error { return writeDoctor(w, out) }); err != nil {
		return err
	}
	if !out.OK {
		return &ExitError{Code: 1, Err: fmt.Errorf("%d problems", len(out.Problems)), Silent: true}
	}
	return nil
}

// doctorStore fills in the store, the watcher and the chain.
func doctorStore(out *DoctorOutput, problem func(p, fix string)) {
	base, err := workspace.StateBase()
	if err != nil {
		problem("the state folder: "+err.Error(), "set HOME, or REWIND_STATE_DIR")
		return
	}
	out.Store.StateDir = base
	out.Store.StateDirBytes = workspace.DirSize(base)
	ws, err := workspace.Open(out.Workspace)
	if errors.Is(err, workspace.ErrNotInitialized) {
		out.Notes = append(out.Notes, "no store yet: the first checkpoint or effect a hook or the MCP server records makes it, in "+base)
		return
	}
	if err != nil {
		problem("the store cannot be opened: "+err.Error(), "agent-rewind check")
		return
	}
	defer ws.Close()
	out.Store.Exists, out.Store.Path, out.Store.ID, out.Store.Bytes = true, ws.Meta, ws.ID, workspace.DirSize(ws.Meta)
	w := WatchStatusOutput{Supported: watch.Supported}
	if r, err := watch.Ask(ws.Meta, watch.Request{Op: "status"}, 5*time.Second); err == nil {
		w.Running, w.Reply = true, r
	} else if !errors.Is(err, watch.ErrNotRunning) {
		problem("the change watcher does not answer: "+err.Error(), "agent-rewind watch stop (the next checkpoint starts a new one)")
	}
	out.Watcher = &w
	ch := &DoctorChain{}
	out.Chain = ch
	if _, err := os.Stat(ws.ChainPath()); errors.Is(err, os.ErrNotExist) {
		ch.OK = true
		return
	}
	opts := hashchain.VerifyOptions{}
	if h, err := anchoredHead(ws); err == nil && h != nil {
		opts.Head = h
	}
	rep, err := hashchain.VerifyFile(ws.ChainPath(), opts)
	var ve *hashchain.VerifyError
	switch {
	case errors.As(err, &ve):
		ch.Problem = ve.Error()
		fix := "agent-rewind chain verify (it names the first bad line; docs/chain.md says what to do)"
		if ve.Problem == hashchain.ProblemTorn {
			fix = "agent-rewind chain recover"
		}
		problem("the hash chain does not verify: "+ve.Error(), fix)
		return
	case err != nil:
		ch.Problem = err.Error()
		problem("the hash chain cannot be read: "+err.Error(), "agent-rewind check")
		return
	}
	ch.OK, ch.Size = true, rep.Size
	if g, err := ws.ChainGaps(); err == nil && !g.Complete() {
		ch.Gaps = len(g.Leftover) + len(g.UnrecordedCheckpoints) + len(g.UnrecordedEffects) + len(g.MissingCheckpoints) + len(g.MissingEffects)
		problem(fmt.Sprintf("the chain and the store disagree on %d entries", ch.Gaps), "agent-rewind check")
	}
}

// programCheck returns a check that a program named by a hook or server starts and is
// agent-rewind's: agent-rewind answers --json version, agent-rewind-hook refuses any command but
// the guard's with exit 2 and its usage. Each program is started once.
func programCheck() func(string) error {
	seen := map[string]error{}
	return func(p string) error {
		if err, ok := seen[p]; ok {
			return err
		}
		err := agentconfig.Runnable(p)
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			args := []string{"--json", "version"}
			if filepath.Base(p) == "agent-rewind-hook" {
				args = []string{"version"}
			}
			cmd := exec.CommandContext(ctx, p, args...)
			b, runErr := cmd.CombinedOutput()
			cancel()
			code := cmd.ProcessState.ExitCode()
			switch {
			case filepath.Base(p) == "agent-rewind-hook" && code == 2 && strings.HasPrefix(string(b), "agent-rewind-hook"):
			case filepath.Base(p) != "agent-rewind-hook" && runErr == nil:
			default:
				err = fmt.Errorf("%s does not run as agent-rewind (exit %d: %s)", p, code, strings.TrimSpace(firstLine(string(b))))
			}
		}
		seen[p] = err
		return err
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// writeDoctor writes the checks for people, problems last with their fixes.
func writeDoctor(w io.Writer, out DoctorOutput) error {
	fmt.Fprintf(w, "workspace     %s\n", out.Workspace)
	if out.WorkspaceChoice != nil {
		fmt.Fprintf(w, "  chosen by   %s\n", out.WorkspaceChoice.Why)
	}
	if out.Store.Exists {
		fmt.Fprintf(w, "store         %s (%s; every store: %s)\n", out.Store.Path, byteSize(out.Store.Bytes), byteSize(out.Store.StateDirBytes))
	} else {
		fmt.Fprintf(w, "store         none yet, in %s\n", out.Store.StateDir)
	}
	if out.GuardServer.Running {
		fmt.Fprintf(w, "guard server  pid %d, %s served\n", out.GuardServer.PID, plural(int(out.GuardServer.Served), "call", "calls"))
	} else {
		fmt.Fprintln(w, "guard server  not running (the next hook call starts one)")
	}
	switch {
	case out.Watcher == nil:
	case !out.Watcher.Supported:
		fmt.Fprintln(w, "watcher       none on this platform: checkpoints walk the tree")
	case out.Watcher.Running:
		fmt.Fprintf(w, "watcher       pid %d, %s watched\n", out.Watcher.PID, plural(out.Watcher.Watched, "directory", "directories"))
	default:
		fmt.Fprintln(w, "watcher       not running (the next checkpoint starts one)")
	}
	if ch := out.Chain; ch != nil {
		if ch.OK {
			fmt.Fprintf(w, "chain         intact, %s\n", plural(int(ch.Size), "entry", "entries"))
		} else {
			fmt.Fprintf(w, "chain         BROKEN: %s\n", ch.Problem)
		}
	}
	for _, c := range out.Clients {
		state := "not set up"
		if c.Found {
			state = "set up"
			n := 0
			for _, p := range out.Problems {
				if p.Client == c.Client {
					n++
				}
			}
			if n > 0 {
				state += ", " + plural(n, "problem", "problems")
			}
		}
		fmt.Fprintf(w, "%-13s %s\n", c.Client, state)
		for _, f := range c.Files {
			var parts []string
			for _, h := range f.Hooks {
				desc := h.Event
				if h.Trust != "" {
					desc += " (" + h.Trust + ")"
				}
				parts = append(parts, desc)
			}
			if f.Server != nil {
				parts = append(parts, "MCP server")
			}
			if len(parts) > 0 {
				fmt.Fprintf(w, "  %s (%s): %s\n", f.Path, f.Scope, strings.Join(parts, ", "))
			}
		}
		for _, n := range c.Notes {
			fmt.Fprintf(w, "  note: %s\n", n)
		}
	}
	for _, n := range out.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	if out.OK {
		fmt.Fprintln(w, "\nok: no problem found")
		return nil
	}
	fmt.Fprintf(w, "\n%s:\n", plural(len(out.Problems), "problem", "problems"))
	for _, p := range out.Problems {
		fmt.Fprintf(w, "- %s\n  fix: %s\n", p.Problem, p.Fix)
	}
	return nil
}
