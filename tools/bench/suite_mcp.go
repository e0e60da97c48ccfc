package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"
	"unicode/utf8"
)

// The mcp suite (issue 5): the approximate context cost of each tool profile, measured as the
// earlier product did: the serialized tool definitions (name, description, input and output
// schema) plus the server instructions, in characters divided by 4, rounded up, read through
// the server's own initialize and tools/list over stdio from "agent-rewind mcp --profile P".
func init() {
	register(Suite{
		Name:        "mcp",
		Description: "approximate token cost per MCP tool profile (tool definitions + instructions, chars/4), via tools/list",
		Modules:     []string{"mcpserver", "cli"},
		Run:         runMCP,
	})
}

// mcpProfiles are the profiles, their expected tool counts, goals and the earlier product's figure.
var mcpProfiles = []struct {
	name    string
	tools   int
	goal    Goal
	earlier string
}{
	{"lean", 3, AtMost(600), "earlier product: 691"},
	{"recovery", 7, NoGoal, ""},
	{"analytics", 1, NoGoal, ""},
	{"all", 8, AtMost(1600), "earlier product: 1,841"},
}

func runMCP(ctx context.Context, b *Bench) error {
	agent, err := b.Agent(ctx)
	if err != nil {
		return err
	}
	if err := agent.Require(ctx, b, []string{"mcp"}); err != nil {
		return err
	}
	for _, p := range mcpProfiles {
		ws, err := b.TempDir("mcp-" + p.name)
		if err != nil {
			return err
		}
		instructions, tools, err := mcpList(ctx, agent, ws, p.name)
		if err != nil {
			return fmt.Errorf("profile %s: %w", p.name, err)
		}
		chars := utf8.RuneCountInString(instructions)
		for _, t := range tools {
			chars += utf8.RuneCount(t)
		}
		tokens := (chars + 3) / 4
		b.Value("mcp_tokens_"+p.name, float64(tokens), "tokens (chars/4)", p.earlier, nil, p.goal,
			fmt.Sprintf("%d characters: %d tool definitions plus %d of instructions", chars, len(tools), utf8.RuneCountInString(instructions)))
		b.Count("mcp_tools_"+p.name, int64(len(tools)), int64(p.tools), "tools", "tools the profile should list", Exactly(float64(p.tools)), "")
	}
	return nil
}

// mcpList runs "agent-rewind mcp --profile profile" and returns the instructions from
// initialize and each tool's serialized definition (name, description, inputSchema,
// outputSchema, compact JSON) from tools/list, following pagination. Stdin stays open until
// every answer is read (go-sdk stdio servers can drop replies when stdin closes early).
func mcpList(ctx context.Context, agent *Agent, ws, profile string) (string, [][]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := agent.Command(ctx, ws, "mcp", "--profile", profile)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	defer func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}()
	in := bufio.NewReader(stdout)
	id := 0
	call := func(method string, params any) (json.RawMessage, error) {
		id++
		if err := writeRPC(stdin, map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
			return nil, err
		}
		for {
			line, err := in.ReadBytes('\n')
			if err != nil {
				return nil, fmt.Errorf("%s: the server closed its output: %w", method, err)
			}
			var msg struct {
				ID     *int            `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  *struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(line, &msg); err != nil {
				return nil, fmt.Errorf("%s: not JSON-RPC: %.200q", method, line)
			}
			if msg.ID == nil || *msg.ID != id {
				continue // a notification or a server request: not our answer
			}
			if msg.Error != nil {
				return nil, fmt.Errorf("%s: error %d: %s", method, msg.Error.Code, msg.Error.Message)
			}
			return msg.Result, nil
		}
	}
	res, err := call("initialize", map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "agent-rewind-bench", "version": "1"},
	})
	if err != nil {
		return "", nil, err
	}
	var init struct {
		Instructions string `json:"instructions"`
	}
	if err := json.Unmarshal(res, &init); err != nil {
		return "", nil, err
	}
	if err := writeRPC(stdin, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}); err != nil {
		return "", nil, err
	}
	var tools [][]byte
	cursor := ""
	for {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		res, err := call("tools/list", params)
		if err != nil {
			return "", nil, err
		}
		var page struct {
			Tools []struct {
				Name         string          `json:"name"`
				Description  string          `json:"description"`
				InputSchema  json.RawMessage `json:"inputSchema"`
				OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		if err := json.Unmarshal(res, &page); err != nil {
			return "", nil, err
		}
		for _, t := range page.Tools {
			// Compact (the encoder compacts a RawMessage), and without the \u003c escapes of
			// HTML-safe encoding, which would inflate the character count.
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(t); err != nil {
				return "", nil, err
			}
			tools = append(tools, bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
		}
		if page.NextCursor == "" {
			return init.Instructions, tools, nil
		}
		cursor = page.NextCursor
	}
}

func writeRPC(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
