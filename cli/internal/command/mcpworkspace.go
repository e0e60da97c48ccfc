package command

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sync"

	"github.com/agent-rewind/rewind/cli/internal/agentws"
	"github.com/agent-rewind/rewind/cli/internal/hook"
	"github.com/agent-rewind/rewind/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpHint says what to configure when the MCP server has no usable workspace.
const mcpHint = `configure the MCP server with the project folder: "args": ["--workspace", "<project folder>", "mcp"] ` +
	`(Claude Code plugin: "${CLAUDE_PROJECT_DIR}"; Cursor: "${workspaceFolder}"; VS Code: "${workspaceFolder}"), ` +
	`or start it with the project as its working directory`

// mcpWorkspace is the MCP server's Workspace, chosen at the first tool call rather than at
// start: the client's roots can only be asked for once the session is initialized. Until a
// choice succeeds every tool fails with the reason and what to configure; once made, it holds.
type mcpWorkspace struct {
	env *Env
	log io.Writer
	wd  string
	mu  sync.Mutex
	ws  *agentws.Workspace
}

var _ mcpserver.Workspace = (*mcpWorkspace)(nil)

// rootsGone is the first MCP protocol version in which a server cannot ask for roots.
const rootsGone = "2026-07-28"

// sessionKey carries the tool call's *mcp.ServerSession in its context (see withSession).
type sessionKey struct{}

// withSession is receiving middleware that puts the session into each request's context, so
// that the workspace can ask the client for its roots.
func withSession(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
			ctx = context.WithValue(ctx, sessionKey{}, ss)
		}
		return next(ctx, method, req)
	}
}

// mcpSources are the places the MCP server takes its workspace from, in order: a non-empty
// --workspace; CLAUDE_PROJECT_DIR (Claude Code passes it to MCP servers, also a plugin's whose
// working directory is the plugin cache); the first file root the client lists (roots/list);
// the working directory. Each stands for its project (hook.Choose), as for the guard and the
// CLI; with --exact-workspace, for itself.
func mcpSources(ctx context.Context, env *Env, wd string) ([]hook.Source, error) {
	src := []hook.Source{
		hook.FlagSource(env.WorkspaceSet, env.WorkspaceFlag, env.Workspace),
		{Rule: "CLAUDE_PROJECT_DIR", Folder: os.Getenv("CLAUDE_PROJECT_DIR"), OrItself: true},
	}
	if root, err := firstRoot(ctx, src); err != nil {
		return nil, err
	} else if root != "" {
		src = append(src, hook.Source{Rule: "the client's roots/list", Folder: root, OrItself: true})
	}
	return hook.Exactly(append(src, hook.Source{Rule: "the working directory", Folder: wd, OrItself: true}), env.ExactWorkspace), nil
}

// firstRoot asks the client for its roots, unless an earlier source already names a folder or
// the client does not support roots, and returns the first file root's path ("" for none).
func firstRoot(ctx context.Context, earlier []hook.Source) (string, error) {
	for _, s := range earlier {
		if s.Folder != "" {
			return "", nil
		}
	}
	ss, _ := ctx.Value(sessionKey{}).(*mcp.ServerSession)
	if ss == nil {
		return "", nil
	}
	// A client that supports roots declares the capability; one that does not must not be asked.
	// From protocol version 2026-07-28 roots are deprecated (SEP-2577) and a server may not send
	// roots/list while serving a call: such clients name the project in the configuration.
	p := ss.InitializeParams()
	if p == nil || p.Capabilities == nil || p.Capabilities.RootsV2 == nil || p.ProtocolVersion >= rootsGone {
		return "", nil
	}
	res, err := ss.ListRoots(ctx, nil)
	if err != nil {
		return "", fmt.Errorf("ask the client for its roots (roots/list): %w; %s", err, mcpHint)
	}
	for _, r := range res.Roots {
		u, err := url.Parse(r.URI)
		if err == nil && u.Scheme == "file" && u.Path != "" {
			return filepath.FromSlash(u.Path), nil
		}
	}
	return "", nil
}

// get returns the workspace, choosing it on the first call that succeeds.
func (m *mcpWorkspace) get(ctx context.Context) (*agentws.Workspace, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ws != nil {
		return m.ws, nil
	}
	src, err := mcpSources(ctx, m.env, m.wd)
	if err != nil {
		return nil, err
	}
	c, err := hook.Choose(src, mcpHint)
	if err != nil {
		return nil, err
	}
	ws, err := agentws.New(c.Root, agentws.Options{Log: m.log, Watch: true})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(m.log, "agent-rewind mcp: workspace %s (chosen by %s)\n", c.Root, c.Why())
	m.ws = ws
	return ws, nil
}

// Close closes the workspace, if one was chosen.
func (m *mcpWorkspace) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ws == nil {
		return nil
	}
	return m.ws.Close()
}

func (m *mcpWorkspace) Checkpoint(ctx context.Context, label string) (mcpserver.CheckpointResult, error) {
	w, err := m.get(ctx)
	if err != nil {
		return mcpserver.CheckpointResult{}, err
	}
	return w.Checkpoint(ctx, label)
}

func (m *mcpWorkspace) List(ctx context.Context) (mcpserver.ListResult, error) {
	w, err := m.get(ctx)
	if err != nil {
		return mcpserver.ListResult{}, err
	}
	return w.List(ctx)
}

func (m *mcpWorkspace) Rewind(ctx context.Context, req mcpserver.RewindRequest) (mcpserver.RestoreResult, error) {
	w, err := m.get(ctx)
	if err != nil {
		return mcpserver.RestoreResult{}, err
	}
	return w.Rewind(ctx, req)
}

func (m *mcpWorkspace) Replay(ctx context.Context, id string) (mcpserver.RestoreResult, error) {
	w, err := m.get(ctx)
	if err != nil {
		return mcpserver.RestoreResult{}, err
	}
	return w.Replay(ctx, id)
}

func (m *mcpWorkspace) GuardEffect(ctx context.Context, req mcpserver.GuardRequest) (mcpserver.GuardResult, error) {
	w, err := m.get(ctx)
	if err != nil {
		return mcpserver.GuardResult{}, err
	}
	return w.GuardEffect(ctx, req)
}

func (m *mcpWorkspace) Savings(ctx context.Context) (mcpserver.SavingsResult, error) {
	w, err := m.get(ctx)
	if err != nil {
		return mcpserver.SavingsResult{}, err
	}
	return w.Savings(ctx)
}

func (m *mcpWorkspace) BacktrackCandidates(ctx context.Context) (mcpserver.CandidatesResult, error) {
	w, err := m.get(ctx)
	if err != nil {
		return mcpserver.CandidatesResult{}, err
	}
	return w.BacktrackCandidates(ctx)
}

func (m *mcpWorkspace) BacktrackCommit(ctx context.Context, req mcpserver.BacktrackRequest) (mcpserver.BacktrackResult, error) {
	w, err := m.get(ctx)
	if err != nil {
		return mcpserver.BacktrackResult{}, err
	}
	return w.BacktrackCommit(ctx, req)
}
