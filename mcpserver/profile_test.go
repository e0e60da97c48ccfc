package mcpserver_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/mcpserver"
	"github.com/agent-rewind/rewind/mcpserver/internal/fakeworkspace"
)

func TestResolveProfile(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == mcpserver.EnvProfile {
				return v
			}
			return ""
		}
	}
	cases := []struct {
		flag, env string
		want      mcpserver.Profile
		wantErr   string // substring; "" for success
	}{
		{"", "", mcpserver.ProfileAll, ""},
		{"lean", "", mcpserver.ProfileLean, ""},
		{"", "recovery", mcpserver.ProfileRecovery, ""},
		{"analytics", "lean", mcpserver.ProfileAnalytics, ""}, // the flag wins
		{"all", "bogus", mcpserver.ProfileAll, ""},            // an env value the flag overrides is not read
		{"", "bogus", "", `REWIND_MCP_PROFILE: unknown MCP profile "bogus": use one of lean, recovery, analytics, all`},
		{"Lean", "", "", `--profile: unknown MCP profile "Lean"`},
		{"lean ", "", "", `--profile: unknown MCP profile "lean "`},
	}
	for _, c := range cases {
		got, err := mcpserver.ResolveProfile(c.flag, env(c.env))
		if c.wantErr == "" {
			if err != nil || got != c.want {
				t.Errorf("ResolveProfile(%q, env %q) = %q, %v; want %q", c.flag, c.env, got, err, c.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.wantErr) || !errors.Is(err, mcpserver.ErrUnknownProfile) {
			t.Errorf("ResolveProfile(%q, env %q) error = %v; want one containing %q, matching ErrUnknownProfile", c.flag, c.env, err, c.wantErr)
		}
	}
	if p, err := mcpserver.ResolveProfile("", nil); p != mcpserver.DefaultProfile || err != nil {
		t.Errorf("ResolveProfile with no getenv = %q, %v", p, err)
	}
}

func TestNewRejects(t *testing.T) {
	if _, err := mcpserver.New(fakeworkspace.New(), mcpserver.Options{Profile: "max"}); !errors.Is(err, mcpserver.ErrUnknownProfile) {
		t.Errorf("New with profile max: err = %v, want ErrUnknownProfile", err)
	}
	if _, err := mcpserver.New(nil, mcpserver.Options{}); err == nil {
		t.Error("New with a nil Workspace succeeded")
	}
	for _, p := range mcpserver.Profiles() {
		if _, err := mcpserver.ParseProfile(string(p)); err != nil {
			t.Errorf("ParseProfile(%q): %v", p, err)
		}
	}
	if mcpserver.Profile("max").Tools() != nil || mcpserver.Profile("max").Has("checkpoint") {
		t.Error("an unknown profile has tools")
	}
}
