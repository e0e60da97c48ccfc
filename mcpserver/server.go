package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServerName is the name the server reports on initialize.
const ServerName = "agent-rewind"

// Options configure New.
type Options struct {
	// Profile names the tool profile: "lean", "recovery", "analytics" or "all". Empty means
	// DefaultProfile. Use ResolveProfile to apply the flag-over-environment precedence.
	Profile string
	// Version is the version reported on initialize; empty reports "devel".
	Version string
	// Now is the clock used for candidate ages; nil means time.Now. Tests pin it.
	Now func() time.Time
}

// server holds what the tool handlers need.
type server struct {
	ws      Workspace
	profile Profile
	now     func() time.Time
}

// New returns an MCP server exposing the tools of opts.Profile over ws. It fails, before any
// protocol traffic, on a nil Workspace or an unknown profile. Serve it with
// (*mcp.Server).Run(ctx, &StdioTransport{}).
func New(ws Workspace, opts Options) (*mcp.Server, error) {
	if ws == nil {
		return nil, errors.New("mcpserver.New: nil Workspace")
	}
	profile := DefaultProfile
	if opts.Profile != "" {
		p, err := ParseProfile(opts.Profile)
		if err != nil {
			return nil, err
		}
		profile = p
	}
	version := opts.Version
	if version == "" {
		version = "devel"
	}
	s := &server{ws: ws, profile: profile, now: opts.Now}
	if s.now == nil {
		s.now = time.Now
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: ServerName, Version: version}, &mcp.ServerOptions{
		Instructions: Instructions(profile),
		// Tools only, and the list never changes while serving: advertise no logging and no
		// list_changed notifications.
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
	})
	for _, name := range profile.Tools() {
		if err := s.register(srv, name); err != nil {
			return nil, fmt.Errorf("mcpserver.New: tool %s: %w", name, err)
		}
	}
	srv.AddReceivingMiddleware(s.refuseHidden)
	return srv, nil
}

// register adds the tool named name to srv.
func (s *server) register(srv *mcp.Server, name string) error {
	switch name {
	case toolCheckpoint:
		return addTool(srv, name, toolDescriptions[name], annotate(false, false, false), s.checkpoint)
	case toolList:
		return addTool(srv, name, toolDescriptions[name], annotate(true, false, true), s.list)
	case toolRewind:
		return addTool(srv, name, toolDescriptions[name], annotate(false, true, true), s.rewind)
	case toolReplay:
		return addTool(srv, name, toolDescriptions[name], annotate(false, true, true), s.replay)
	case toolGuardEffect:
		return addTool(srv, name, toolDescriptions[name], annotate(false, false, false), s.guardEffect)
	case toolSavings:
		return addTool(srv, name, toolDescriptions[name], annotate(true, false, true), s.savings)
	case toolBacktrackCandidates:
		return addTool(srv, name, toolDescriptions[name], annotate(true, false, true), s.backtrackCandidates)
	case toolBacktrackCommit:
		return addTool(srv, name, toolDescriptions[name], annotate(false, true, false), s.backtrackCommit)
	}
	return errors.New("no such tool")
}

// toolDescriptions are the tools' descriptions: what the tool does and when to call it, short,
// since the model reads them on every turn.
var toolDescriptions = map[string]string{
	toolCheckpoint:          "Snapshot the whole workspace, shell changes too, to undo to; returns its id.",
	toolList:                "Checkpoints and tool calls to rewind to, newest first.",
	toolRewind:              "Undo: restore the whole workspace to a checkpoint, tool call id or prompt:N, saving the state left.",
	toolReplay:              "Go forward to a later checkpoint, e.g. safety_id.",
	toolGuardEffect:         "Before an irreversible external action, with a stable key; if admitted is false, don't do it.",
	toolSavings:             "The gateway's replay savings.",
	toolBacktrackCandidates: "Checkpoints to go back to, best first, with notes.",
	toolBacktrackCommit:     "Note what failed at checkpoint id, then rewind there.",
}

// annotate builds the tool annotations. Every tool acts on the workspace's own files and
// .rewind/ state only, so none is open-world: guard_effect gates an external effect but does not
// perform it.
func annotate(readOnly, destructive, idempotent bool) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{
		ReadOnlyHint:    readOnly,
		DestructiveHint: &destructive,
		IdempotentHint:  idempotent,
		OpenWorldHint:   new(false),
	}
}

// addTool registers a typed handler with input and output schemas from schemaFor.
func addTool[In, Out any](srv *mcp.Server, name, description string, ann *mcp.ToolAnnotations, h mcp.ToolHandlerFor[In, Out]) error {
	in, err := schemaFor[In]()
	if err != nil {
		return err
	}
	out, err := schemaFor[Out]()
	if err != nil {
		return err
	}
	trimOutput(out)
	mcp.AddTool(srv, &mcp.Tool{Name: name, Description: description, InputSchema: in, OutputSchema: out, Annotations: ann}, h)
	return nil
}

// refuseHidden answers a call to a tool that exists but is not in this profile with an error that
// names the profiles that have it, instead of the SDK's bare "unknown tool".
func (s *server) refuseHidden(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "tools/call" {
			if call, ok := req.(*mcp.CallToolRequest); ok && call.Params != nil {
				name := call.Params.Name
				if slices.Contains(allTools, name) && !s.profile.Has(name) {
					have := profilesWith(name)
					return nil, &jsonrpc.Error{
						Code: jsonrpc.CodeInvalidParams,
						Message: fmt.Sprintf("tool %q is not enabled in MCP profile %q (profiles with it: %s); restart the server with --profile %s, or set %s=%s",
							name, s.profile, strings.Join(have, ", "), have[0], EnvProfile, have[0]),
					}
				}
			}
		}
		return next(ctx, method, req)
	}
}
