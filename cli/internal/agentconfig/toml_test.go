package agentconfig

import (
	"strings"
	"testing"
)

func TestParseTOML(t *testing.T) {
	doc, err := parseTOML(`# Codex
model = "gpt-5.5"   # a comment
approval_policy = 'never'
n = 1_000
f = -3.5e2
on = true
when = 1979-05-27 07:32:00Z
day = 1979-05-27
hex = 0xDEAD_beef
list = [
  "a", # first
  'b',
]
inline = { x = 1, y.z = "w" }
multi = """
one \
   two"""
lit = '''C:\path'''

[projects."/home/me/shop"]
trust_level = "trusted"

[mcp_servers.shop]
command = "/usr/bin/shop"
args = ["--log", "/tmp/log"]

[mcp_servers.shop.env]
A = "1"

[hooks.state."/home/me/shop/.codex/hooks.json:pre_tool_use:0:0"]
trusted_hash = "sha256:abc"

[[profiles]]
name = "a"
[[profiles]]
name = "b"
[profiles.sub]
k = 1
`)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		keys []string
		want string
	}{
		{[]string{"model"}, "gpt-5.5"},
		{[]string{"approval_policy"}, "never"},
		{[]string{"multi"}, "one two"},
		{[]string{"lit"}, `C:\path`},
		{[]string{"projects", "/home/me/shop", "trust_level"}, "trusted"},
		{[]string{"mcp_servers", "shop", "command"}, "/usr/bin/shop"},
		{[]string{"mcp_servers", "shop", "env", "A"}, "1"},
		{[]string{"hooks", "state", "/home/me/shop/.codex/hooks.json:pre_tool_use:0:0", "trusted_hash"}, "sha256:abc"},
		{[]string{"profiles", "name"}, "b"}, // the last element of an array of tables
		{[]string{"inline", "y", "z"}, "w"},
	} {
		v := doc.lookup(c.keys...)
		if v == nil || v.kind != tString || v.str != c.want {
			t.Errorf("%v: %+v, want %q", c.keys, v, c.want)
		}
	}
	if args, ok := doc.lookup("mcp_servers", "shop", "args").strs(); !ok || strings.Join(args, " ") != "--log /tmp/log" {
		t.Errorf("args: %v", args)
	}
	for _, k := range []string{"n", "f", "on", "when", "day", "hex"} {
		if doc.lookup(k) == nil {
			t.Errorf("%s not read", k)
		}
	}
}

// What Codex itself would refuse, setup refuses too: it must not append to a file it cannot
// read, nor make a valid file invalid.
func TestParseTOMLRefuses(t *testing.T) {
	for _, src := range []string{
		"a = 1\na = 2\n",
		"[t]\n[t]\n",
		"a = {x = 1}\n[a]\n",
		"a = \"open\n",
		"a = 'open\n",
		"a = \"\"\"never closed\n",
		"a = [1, 2\n",
		"a = nope\n",
		"a = 1 b = 2\n",
		"[a\n",
		"a.b = 1\n[a.b]\n",
		"a = { x = 1,\n y = 2 }\n",
		"a = \"\\q\"\n",
		"= 1\n",
		"a = [[1]\n",
		"[[a]]\n[a]\n",
		"a = 1\n[a.b]\n",
		"x = \"\x01\"\n",
		"k = \xff\n",
	} {
		if _, err := parseTOML(src); err == nil {
			t.Errorf("%q: parsed", src)
		} else if !strings.Contains(err.Error(), "line ") {
			t.Errorf("%q: %v does not say where", src, err)
		}
	}
}

// A table setup appends is valid TOML after the file, found there, and taken out leaves the
// file as it was, whatever the file ends with.
func TestAppendRemoveBlock(t *testing.T) {
	table := tomlTable{keys: []string{"mcp_servers", "agent-rewind"}, members: []tomlMember{{"command", `"/bin/agent-rewind"`}, {"args", `["mcp"]`}}, comment: "by setup"}
	block := table.text()
	for _, src := range []string{"", "model = \"x\"", "model = \"x\"\n", "model = \"x\"\n\n", "[mcp_servers.shop]\ncommand = \"s\"\n# trailing comment"} {
		out := appendBlock(src, block)
		doc, err := parseTOML(out)
		if err != nil {
			t.Fatalf("%q + block: %v\n%s", src, err, out)
		}
		if v := doc.lookup("mcp_servers", "agent-rewind", "command"); v == nil || v.str != "/bin/agent-rewind" {
			t.Errorf("%q: the table is not there:\n%s", src, out)
		}
		back, ok := removeBlock(out, block)
		if !ok || strings.TrimRight(back, "\n") != strings.TrimRight(src, "\n") {
			t.Errorf("%q: taken out gives %q (%v)", src, back, ok)
		}
	}
	if why, _ := canAppend(mustTOML(t, "mcp_servers = { a = 1 }\n"), table.keys); !strings.Contains(why, "inline table") {
		t.Errorf("an inline mcp_servers: %q", why)
	}
	if _, existing := canAppend(mustTOML(t, "[mcp_servers.agent-rewind]\ncommand = \"x\"\n"), table.keys); existing == nil {
		t.Error("an existing table is not found")
	}
}

func mustTOML(t *testing.T, s string) *tval {
	t.Helper()
	d, err := parseTOML(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// FuzzParseTOML: any input is read or refused, never a panic; when read, a table appended by
// setup keeps it readable and is taken out again exactly.
func FuzzParseTOML(f *testing.F) {
	for _, s := range []string{"", "a = 1\n", "[x]\ny = 'z'\n", "a = [1,\n2]\n", "t = {a.b = 1}\n", "[[a]]\n[a.b]\n", "s = \"\"\"\nx\\\n  y\"\"\"\n", "d = 1979-05-27 07:32:00Z\n"} {
		f.Add(s)
	}
	table := tomlTable{keys: []string{"mcp_servers", "agent-rewind"}, members: []tomlMember{{"command", `"/x"`}}}
	f.Fuzz(func(t *testing.T, src string) {
		doc, err := parseTOML(src)
		if err != nil {
			return
		}
		if why, existing := canAppend(doc, table.keys); why != "" || existing != nil {
			return
		}
		out := appendBlock(src, table.text())
		if _, err := parseTOML(out); err != nil {
			// A file whose last line is an unterminated comment or value without a newline is
			// still valid after the blank line appendBlock adds; anything else is a bug.
			t.Fatalf("appending to %q gave invalid TOML: %v\n%s", src, err, out)
		}
		back, ok := removeBlock(out, table.text())
		if !ok || strings.TrimRight(back, "\n") != strings.TrimRight(src, "\n") && strings.TrimSpace(src) != "" {
			t.Fatalf("taking the table out of %q gives %q", out, back)
		}
	})
}
