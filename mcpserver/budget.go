package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Budget is the approximate context cost of a connected server's tool surface, measured as the
// earlier product measured it: the serialized tool definitions (name, description, input and
// output schema, as JSON without extra spaces) plus the server instructions, in characters, and
// Tokens = ceil(Chars / 4). It is an estimate of context size, not a tokenizer count.
type Budget struct {
	Tools        int // how many tools were listed
	Chars        int // characters of the tool definitions plus the instructions
	Tokens       int // ceil(Chars / 4)
	Instructions int // characters of the instructions alone
}

// toolDefinition is the part of a tool definition the budget counts. Annotations and other
// metadata are left out, as in the earlier product's measure.
type toolDefinition struct {
	Name         string `json:"name"`
	Description  string `json:"description,omitempty"`
	InputSchema  any    `json:"inputSchema"`
	OutputSchema any    `json:"outputSchema,omitempty"`
}

// MeasureBudget lists the tools through cs (the SDK's own client session) and measures them
// with the instructions cs received on initialize.
func MeasureBudget(ctx context.Context, cs *mcp.ClientSession) (Budget, error) {
	var b Budget
	init := cs.InitializeResult()
	if init == nil {
		return b, fmt.Errorf("measure budget: the session is not initialized")
	}
	b.Instructions = utf8.RuneCountInString(init.Instructions)
	b.Chars = b.Instructions
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return Budget{}, fmt.Errorf("measure budget: tools/list: %w", err)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false) // count characters as sent, not \u003c escapes
		if err := enc.Encode(toolDefinition{tool.Name, tool.Description, tool.InputSchema, tool.OutputSchema}); err != nil {
			return Budget{}, fmt.Errorf("measure budget: tool %s: %w", tool.Name, err)
		}
		b.Chars += utf8.RuneCount(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
		b.Tools++
	}
	b.Tokens = (b.Chars + 3) / 4
	return b, nil
}
