package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/agent-rewind/rewind/mcpserver"
	"github.com/agent-rewind/rewind/mcpserver/internal/fakeworkspace"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// checked is a Workspace that records every input violating the limits mcpserver promises to
// enforce before a Workspace is called.
type checked struct {
	*fakeworkspace.Workspace
	mu         sync.Mutex
	violations []string
}

func (c *checked) violate(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.violations = append(c.violations, fmt.Sprintf(format, args...))
}

func (c *checked) takeViolations() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	v := c.violations
	c.violations = nil
	return v
}

func (c *checked) id(id string) { c.idLen(id, mcpserver.MaxIDLen) }

// ref checks the id of rewind and replay: a checkpoint id or a tool call id.
func (c *checked) ref(id string) { c.idLen(id, mcpserver.MaxToolCallIDLen) }

func (c *checked) idLen(id string, max int) {
	if id == "" || len(id) > max || strings.Trim(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") != "" {
		c.violate("id %q", id)
	}
}

func (c *checked) line(what, s string, max int) {
	if !utf8.ValidString(s) || utf8.RuneCountInString(s) > max || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 }) {
		c.violate("%s %q", what, s)
	}
}

func (c *checked) Checkpoint(ctx context.Context, label string) (mcpserver.CheckpointResult, error) {
	c.line("label", label, mcpserver.MaxLabelLen)
	return c.Workspace.Checkpoint(ctx, label)
}

func (c *checked) Rewind(ctx context.Context, req mcpserver.RewindRequest) (mcpserver.RestoreResult, error) {
	if n, ok := strings.CutPrefix(req.ID, mcpserver.PromptRef); ok { // prompt:N, N from 1
		if n == "" || len(n) > 9 || n[0] == '0' || strings.Trim(n, "0123456789") != "" {
			c.violate("prompt ref %q", req.ID)
		}
	} else {
		c.ref(req.ID)
	}
	return c.Workspace.Rewind(ctx, req)
}

func (c *checked) Replay(ctx context.Context, id string) (mcpserver.RestoreResult, error) {
	c.ref(id)
	return c.Workspace.Replay(ctx, id)
}

func (c *checked) GuardEffect(ctx context.Context, req mcpserver.GuardRequest) (mcpserver.GuardResult, error) {
	if req.Key == "" || len(req.Key) > mcpserver.MaxKeyLen {
		c.violate("key %q", req.Key)
	}
	c.line("key", req.Key, mcpserver.MaxKeyLen)
	c.line("description", req.Description, mcpserver.MaxDescriptionLen)
	if len(req.Payload) > 0 {
		var obj map[string]any
		if len(req.Payload) > mcpserver.MaxPayloadBytes || json.Unmarshal(req.Payload, &obj) != nil || obj == nil {
			c.violate("payload %q", req.Payload)
		}
	}
	return c.Workspace.GuardEffect(ctx, req)
}

func (c *checked) BacktrackCommit(ctx context.Context, req mcpserver.BacktrackRequest) (mcpserver.BacktrackResult, error) {
	c.id(req.ID)
	if req.WhatFailed == "" || !utf8.ValidString(req.WhatFailed) || utf8.RuneCountInString(req.WhatFailed) > mcpserver.MaxNoteLen {
		c.violate("what_failed %q", req.WhatFailed)
	}
	if !utf8.ValidString(req.Lesson) || utf8.RuneCountInString(req.Lesson) > mcpserver.MaxNoteLen {
		c.violate("lesson %q", req.Lesson)
	}
	return c.Workspace.BacktrackCommit(ctx, req)
}

// FuzzToolArguments sends arbitrary arguments to every tool through the SDK's client and
// checks that the server never fails at the protocol level on them, never hands the Workspace an
// input outside the limits, and answers every successful call with a complete structured result.
func FuzzToolArguments(f *testing.F) {
	tools := mcpserver.ProfileAll.Tools()
	seeds := []struct {
		tool int
		args string
	}{
		{0, `{"label":"before refactor"}`},
		{0, `{"label":"a\u0000b"}`},
		{0, `{}`},
		{1, `{"id":"cp0001"}`},
		{1, `{"id":"../x"}`},
		{1, `{"id":"prompt:3"}`},
		{1, `{"id":"prompt:03","conversation":true}`},
		{2, `{"key":"deploy:prod","payload":{"v":1},"description":"d"}`},
		{2, `{"key":"k","payload":null}`},
		{2, `{"key":"\ud800"}`},
		{3, `{}`},
		{4, `{"id":"cp0001"}`},
		{6, `{"id":"cp0001","what_failed":"x\ny","lesson":"z"}`},
		{6, `{"id":"cp0001","what_failed":"","lesson":7}`},
		{7, `{"extra":true}`},
	}
	for _, s := range seeds {
		f.Add(uint8(s.tool), []byte(s.args))
	}
	ws := &checked{Workspace: fakeworkspace.New()}
	cs := connect(f, ws, mcpserver.ProfileAll)
	schemas := map[string]any{}
	for _, tool := range listTools(f, cs) {
		schemas[tool.Name] = tool.OutputSchema
	}
	ws.Workspace.Checkpoint(context.Background(), "seed") // so cp0001 exists
	f.Fuzz(func(t *testing.T, toolIndex uint8, args []byte) {
		if !json.Valid(args) {
			t.Skip()
		}
		tool := tools[int(toolIndex)%len(tools)]
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(args)})
		for _, v := range ws.takeViolations() {
			t.Errorf("%s(%s): the Workspace received %s", tool, args, v)
		}
		if err != nil {
			// Only arguments that are not a JSON object may be refused at the protocol level.
			var obj map[string]any
			if json.Unmarshal(args, &obj) == nil && obj != nil {
				t.Fatalf("%s(%s): protocol error %v", tool, args, err)
			}
			return
		}
		if res.IsError {
			return
		}
		var problems []string
		complete(tool, schemas[tool], res.StructuredContent, &problems)
		for _, p := range problems {
			t.Errorf("%s(%s): %s", tool, args, p)
		}
	})
}
