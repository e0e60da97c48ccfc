package main

import (
	"os/exec"
	"strings"
	"testing"
)

// heavy are the packages whose init and size the hook binary exists to leave out: the MCP
// go-sdk (and encoding/gob, its jsonschema), the MCP server, the gateway and its tape,
// PostgreSQL, the command-line library, HTTP, TLS and HTML templates.
var heavy = []string{
	"github.com/modelcontextprotocol/go-sdk",
	"github.com/google/jsonschema-go",
	"github.com/agent-rewind/rewind/mcpserver",
	"github.com/agent-rewind/rewind/gateway",
	"github.com/agent-rewind/rewind/tape",
	"github.com/agent-rewind/rewind/cli/internal/command",
	"github.com/agent-rewind/rewind/cli/internal/agentws",
	"github.com/jackc/pgx",
	"github.com/alecthomas/kong",
	"github.com/ncruces/go-sqlite3",
	"net/http",
	"html/template",
	"encoding/gob",
	"crypto/tls",
}

func TestLinksNoHeavyPackage(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 20 {
		t.Fatalf("go list -deps listed %d packages: %q", len(deps), deps)
	}
	for _, d := range deps {
		for _, h := range heavy {
			if d == h || strings.HasPrefix(d, h+"/") {
				t.Errorf("agent-rewind-hook links %s (%s): the hook path must not pay its init; keep it out of cli/internal/hook and what it imports", d, h)
			}
		}
	}
}
