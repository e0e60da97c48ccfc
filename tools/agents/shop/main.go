package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Instructions is what the server sends on initialize; the harness finds it in the system
// prompt a client sends the model, as it looks for agent-rewind's.
const Instructions = "shop: the store's mail and refunds. send_email and create_refund act on real customers; get_order only reads."

func main() {
	logPath := flag.String("log", "", "the file each effect tool call is appended to, one JSON line (required)")
	flag.Parse()
	if *logPath == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "shop: usage: shop --log FILE (the file each effect call is appended to)")
		os.Exit(2)
	}
	if err := newServer(*logPath).Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "shop:", err)
		os.Exit(1)
	}
}

// newServer is the shop's MCP server, appending each effect that runs to the file logPath.
func newServer(logPath string) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "shop", Version: "1.0.0"}, &mcp.ServerOptions{Instructions: Instructions})
	l := &effectLog{path: logPath}
	mcp.AddTool(srv, &mcp.Tool{Name: "send_email", Description: "Send an email to a customer."}, func(ctx context.Context, _ *mcp.CallToolRequest, in email) (*mcp.CallToolResult, result, error) {
		n, err := l.add("send_email", in)
		return nil, result{Done: fmt.Sprintf("email %d sent to %s", n, in.To)}, err
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "create_refund", Description: "Refund an order to the customer's card."}, func(ctx context.Context, _ *mcp.CallToolRequest, in refund) (*mcp.CallToolResult, result, error) {
		n, err := l.add("create_refund", in)
		return nil, result{Done: fmt.Sprintf("refund %d of %d cents issued for order %s", n, in.Cents, in.Order)}, err
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "get_order", Description: "Read an order."}, func(ctx context.Context, _ *mcp.CallToolRequest, in struct {
		Order string `json:"order"`
	}) (*mcp.CallToolResult, result, error) {
		return nil, result{Done: "order " + in.Order + ": paid, not shipped"}, nil
	})
	return srv
}

type email struct {
	To      string `json:"to" jsonschema:"the customer's address"`
	Subject string `json:"subject"`
	Body    string `json:"body"`
}

type refund struct {
	Order string `json:"order" jsonschema:"the order id"`
	Cents int    `json:"cents" jsonschema:"the amount in cents"`
}

type result struct {
	Done string `json:"done"`
}

// effectLog appends one line per effect that ran, with the count of lines so far.
type effectLog struct {
	mu   sync.Mutex
	path string
	n    int
}

func (l *effectLog) add(tool string, args any) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	line, err := json.Marshal(map[string]any{"tool": tool, "args": args, "pid": os.Getpid()})
	if err != nil {
		return 0, err
	}
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return 0, fmt.Errorf("shop: the effect log %s: %w", l.path, err)
	}
	defer f.Close()
	if _, err := f.Write(append(line, '\n')); err != nil {
		return 0, fmt.Errorf("shop: the effect log %s: %w", l.path, err)
	}
	l.n++
	return l.n, f.Sync()
}
