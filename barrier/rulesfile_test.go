package barrier

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadRulesWithoutFile(t *testing.T) {
	rs, err := LoadRules(t.TempDir())
	if err != nil || rs != DefaultRules() || rs.Source() != "" {
		t.Fatalf("LoadRules without a file = %p, %v; want the default rules", rs, err)
	}
}

func TestLoadRulesFile(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".rewind"), 0o700)
	name := filepath.Join(root, RulesFile)
	os.WriteFile(name, []byte(`{
		"version": 1,
		"disable": ["ssh-remote"],
		"rules": [
			{"name": "deploy-script", "command": "^(\\./)?scripts/deploy\\.sh( |$)"},
			{"name": "stripe-writes", "tool": "^mcp__stripe__create_", "key_fields": ["idempotency_key"]},
			{"name": "git-push", "command": "^git push prod( |$)"},
			{"name": "custom-cli", "tool": "^RunTool$", "command": "^release "}
		]
	}`), 0o600)
	rs, err := LoadRules(root)
	if err != nil {
		t.Fatal(err)
	}
	if rs.Source() != name {
		t.Errorf("Source = %q", rs.Source())
	}
	for _, c := range []struct {
		in   Input
		rule string
	}{
		{bashInput("./scripts/deploy.sh --prod"), "deploy-script"},
		{bashInput("sudo scripts/deploy.sh"), "deploy-script"},
		{bashInput("scripts/deploy.sh.bak"), ""},
		{bashInput("ssh host uptime"), ""},            // disabled
		{bashInput("git push origin main"), ""},       // built-in git-push replaced
		{bashInput("git push prod main"), "git-push"}, // by the file's rule
		{bashInput("npm publish"), "package-publish"}, // other built-ins still on
		{mcpInput("mcp__stripe__create_charge", `{"idempotency_key":"k1","amount":5}`), "stripe-writes"},
		{mcpInput("mcp__slack__send_message", `{}`), "mcp-outbound"},
		{mcpInput("RunTool", `{"command":"release v1"}`), "custom-cli"},
		{mcpInput("RunTool", `{"command":"build"}`), ""},
	} {
		m := rs.Classify(c.in)
		got := ""
		if m != nil {
			got = m.Rule
			if got == "deploy-script" && m.Builtin {
				t.Errorf("file rule reported as built in")
			}
		}
		if got != c.rule {
			t.Errorf("%s %s: rule %q, want %q", c.in.ToolName, c.in.ToolInput, got, c.rule)
		}
	}
}

func TestParseRulesErrors(t *testing.T) {
	for _, c := range []struct{ json, want string }{
		{`{`, "unexpected EOF"},
		{`{"rules": []}`, `"version" is missing`},
		{`{"version": 2}`, "reads version 1"},
		{`{"version": 1, "rulez": []}`, `unknown field "rulez"`},
		{`{"version": 1, "rules": [{"name": "x", "comand": "y"}]}`, `unknown field "comand"`},
		{`{"version": 1, "disable": ["git-pusj"]}`, `"git-pusj", which is not a built-in rule`},
		{`{"version": 1, "rules": [{"command": "x"}]}`, `"name" must be`},
		{`{"version": 1, "rules": [{"name": "Bad Name", "command": "x"}]}`, `"name" must be`},
		{`{"version": 1, "rules": [{"name": "a", "command": "x"}, {"name": "a", "command": "y"}]}`, "defined twice"},
		{`{"version": 1, "rules": [{"name": "a"}]}`, `neither "tool" nor "command"`},
		{`{"version": 1, "rules": [{"name": "a", "command": "x", "key_fields": ["k"]}]}`, `"key_fields" but no "tool"`},
		{`{"version": 1, "rules": [{"name": "a", "tool": "x", "key_fields": ["a..b"]}]}`, "not a member name"},
		{`{"version": 1, "rules": [{"name": "a", "command": "(unclosed"}]}`, `rule "a": "command": error parsing regexp`},
		{`{"version": 1} {}`, "trailing data"},
	} {
		_, err := ParseRules([]byte(c.json), "effects.json")
		if !errors.Is(err, ErrBadRules) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "effects.json") {
			t.Errorf("ParseRules(%s) = %v, want ErrBadRules mentioning %q and the file", c.json, err, c.want)
		}
	}
	big := make([]byte, MaxRulesFileSize+1)
	if _, err := ParseRules(big, "f"); !errors.Is(err, ErrBadRules) {
		t.Errorf("oversized file: %v", err)
	}
}

// TestRulesDocExample parses the example rules file shown in RULES.md.
func TestRulesDocExample(t *testing.T) {
	doc, err := os.ReadFile("RULES.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i := strings.Index(s, "```json\n")
	if i < 0 {
		t.Fatal("RULES.md has no json example")
	}
	s = s[i+len("```json\n"):]
	example := s[:strings.Index(s, "```")]
	rs, err := ParseRules([]byte(example), "RULES.md example")
	if err != nil {
		t.Fatal(err)
	}
	if m := rs.Classify(bashInput("make release V=1")); m == nil || m.Rule != "make-release" {
		t.Errorf("example rule make-release: %+v", m)
	}
}

// FuzzParseRules checks that no rules file panics the parser, and that whatever it accepts
// classifies calls without panicking.
func FuzzParseRules(f *testing.F) {
	f.Add([]byte(`{"version":1}`))
	f.Add([]byte(`{"version":1,"disable":["git-push"],"rules":[{"name":"a","command":"^x( |$)"},{"name":"b","tool":"^mcp__s__","key_fields":["k","o.id"]}]}`))
	f.Add([]byte(`{"version":1,"rules":[{"name":"c","tool":"T","command":"(a|b)*"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rs, err := ParseRules(data, "fuzz")
		if err != nil {
			if !errors.Is(err, ErrBadRules) {
				t.Fatalf("error %v does not wrap ErrBadRules", err)
			}
			return
		}
		for _, in := range []Input{bashInput("git push && x y"), mcpInput("mcp__s__t", `{"k":1,"o":{"id":2}}`), mcpInput("T", `{"command":"ab"}`)} {
			if _, err := rs.Plan(in); err != nil {
				t.Fatalf("Plan: %v", err)
			}
		}
	})
}
