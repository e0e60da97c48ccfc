package agentconfig

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A world for setup: a project, a home folder and the records, all in t.TempDir(); the
// programs are named, not run.
func testRequest(t *testing.T, client string, scope Scope) Request {
	t.Helper()
	c, err := ClientNamed(client)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	root, home := filepath.Join(dir, "shop"), filepath.Join(dir, "home")
	for _, d := range []string{root, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return Request{Client: c, Scope: scope, Bin: Binaries{Rewind: "/opt/ar/bin/agent-rewind", Hook: "/opt/ar/bin/agent-rewind-hook"},
		Records: filepath.Join(dir, "state", "setup"), Loc: Locations{Root: root, Home: home, Getenv: func(string) string { return "" }}}
}

// userContent is a file of the user's own, in the part's format, with entries where setup
// adds its own: they must all survive setup and --remove.
func userContent(p Part) string {
	switch p.format {
	case formatTOML:
		return "# mine\nmodel = \"gpt-5.5\"\n\n[mcp_servers.shop]\ncommand = \"/usr/bin/shop\" # my server\n"
	case formatScript:
		return ""
	}
	hooks := `"` + p.Hooks + `": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo mine"}]}], "Mine": []}`
	servers := `"` + p.Servers + `": {"shop": {"command": "/usr/bin/shop", "args": ["--log", "x"]}}`
	var members []string
	if p.Hooks != "" {
		members = append(members, hooks)
	}
	if p.Servers != "" {
		members = append(members, servers)
	}
	return `{"theme": "dark", ` + strings.Join(members, ", ") + `, "z": [1, 2]}`
}

func TestSetupThenRemoveRestoresEveryFile(t *testing.T) {
	for _, c := range Clients() {
		for _, scope := range []Scope{ScopeProject, ScopeUser} {
			for _, existing := range []bool{false, true} {
				name := c.Name + "/" + string(scope)
				if existing {
					name += "/with-user-entries"
				}
				t.Run(name, func(t *testing.T) {
					req := testRequest(t, c.Name, scope)
					before := map[string]string{}
					for _, p := range c.PartsIn(scope) {
						if content := userContent(p); existing && content != "" {
							path := p.Path(req.Loc)
							if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
								t.Fatal(err)
							}
							if err := os.WriteFile(path, []byte(content), 0o640); err != nil {
								t.Fatal(err)
							}
							before[path] = content
						}
					}
					res, err := Run(req)
					if err != nil {
						t.Fatal(err)
					}
					if len(c.PartsIn(scope)) > 0 && !res.Changed() {
						t.Fatalf("setup changed nothing: %+v", res.Files)
					}
					for _, f := range res.Files {
						b, err := os.ReadFile(f.Path)
						if err != nil {
							t.Fatalf("%s: %v", f.Path, err)
						}
						if strings.Contains(string(b), "${CLAUDE_PLUGIN_ROOT}") || !strings.Contains(string(b), "/opt/ar/bin/agent-rewind") {
							t.Errorf("%s does not run the absolute programs:\n%s", f.Path, b)
						}
						if strings.Contains(string(b), projectMarker) {
							t.Errorf("%s still holds %s", f.Path, projectMarker)
						}
						if orig, ok := before[f.Path]; ok {
							for _, mine := range []string{"echo mine", "/usr/bin/shop", "theme", "gpt-5.5", "# my server"} {
								if strings.Contains(orig, mine) && !strings.Contains(string(b), mine) {
									t.Errorf("%s lost the user's %q:\n%s", f.Path, mine, b)
								}
							}
						}
						if st, _ := os.Stat(f.Path); existing && before[f.Path] != "" && st.Mode().Perm() != 0o640 {
							t.Errorf("%s: mode %v, the user's was 0640", f.Path, st.Mode().Perm())
						}
					}
					again, err := Run(req)
					if err != nil {
						t.Fatal(err)
					}
					if again.Changed() {
						t.Errorf("a second setup changed files: %+v", again.Files)
					}
					req.Remove = true
					if _, err := Run(req); err != nil {
						t.Fatal(err)
					}
					for _, p := range c.PartsIn(scope) {
						path := p.Path(req.Loc)
						b, err := os.ReadFile(path)
						orig, had := before[path]
						switch {
						case !had && err == nil:
							t.Errorf("%s: made by setup, still there after --remove:\n%s", path, b)
						case !had:
							if _, err := os.Stat(filepath.Dir(path)); err == nil && filepath.Dir(path) != req.Loc.Root && filepath.Dir(path) != req.Loc.Home {
								if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) == 0 {
									t.Errorf("%s: an empty folder setup made is left", filepath.Dir(path))
								}
							}
						case err != nil:
							t.Errorf("%s: the user's file is gone after --remove", path)
						case p.format == formatJSON:
							a, _ := parseJSON([]byte(orig))
							g, err := parseJSON(b)
							if err != nil || !equal(a, g) {
								t.Errorf("%s after --remove:\n%s\nwant the user's:\n%s", path, b, orig)
							}
						default:
							if string(b) != orig {
								t.Errorf("%s after --remove:\n%q\nwant the user's:\n%q", path, b, orig)
							}
						}
					}
					if entries, _ := os.ReadDir(req.Records); len(entries) > 0 {
						t.Errorf("records left after --remove: %v", entries)
					}
				})
			}
		}
	}
}

// A file setup cannot read stops it before anything is written, naming the file and what to do.
func TestSetupRefusesWhatItCannotParse(t *testing.T) {
	for client, bad := range map[string]string{"claude-code": `{"hooks": {} // mine`, "codex": "model = gpt\n", "gemini": `[1, 2]`} {
		req := testRequest(t, client, ScopeProject)
		parts := req.Client.PartsIn(ScopeProject)
		target := parts[len(parts)-1].Path(req.Loc)
		if client == "codex" {
			target = parts[1].Path(req.Loc)
		}
		os.MkdirAll(filepath.Dir(target), 0o755)
		os.WriteFile(target, []byte(bad), 0o644)
		_, err := Run(req)
		if err == nil || !strings.Contains(err.Error(), target) || !strings.Contains(err.Error(), "setup changed nothing") || !strings.Contains(err.Error(), "agent-rewind setup "+client) {
			t.Errorf("%s with %s holding %q: %v", client, target, bad, err)
		}
		for _, p := range parts {
			if path := p.Path(req.Loc); path != target {
				if _, err := os.Stat(path); err == nil {
					t.Errorf("%s: %s was written though %s could not be read", client, path, target)
				}
			}
		}
		if b, _ := os.ReadFile(target); string(b) != bad {
			t.Errorf("%s: the file it could not read was changed: %q", client, b)
		}
	}
}

func TestSetupDryRunWritesNothing(t *testing.T) {
	req := testRequest(t, "codex", ScopeProject)
	req.DryRun = true
	res, err := Run(req)
	if err != nil || !res.Changed() {
		t.Fatalf("%+v %v", res, err)
	}
	for _, f := range res.Files {
		if _, err := os.Stat(f.Path); err == nil || f.Action != ActionCreate || len(f.Changes) == 0 {
			t.Errorf("%s: %s, %d changes, exists: %v", f.Path, f.Action, len(f.Changes), err == nil)
		}
	}
	if _, err := os.Stat(req.Records); err == nil {
		t.Error("a dry run wrote a record")
	}
}

// Setup owns the hooks that run agent-rewind's guard and the server named agent-rewind: ones it
// did not write (the shipped files copied by hand, as the docs said before setup; Claude Code's
// plugin hooks with ${CLAUDE_PLUGIN_ROOT}, which Claude Code refuses outside the plugin; a
// server of the user's run through npx) are replaced by its own, so that the guard runs once
// per call, and --remove puts them back as they were.
func TestSetupTakesOverAndPutsBack(t *testing.T) {
	for _, client := range []string{"claude-code", "codex", "cline", "gemini", "cursor"} {
		req := testRequest(t, client, ScopeProject)
		copied := map[string]string{}
		for _, p := range req.Client.PartsIn(ScopeProject) {
			raw := shipped[p.Shipped]
			if p.format == formatJSON {
				n, _ := parseJSON([]byte(raw))
				keep := &jnode{kind: jObject}
				for _, m := range p.members() {
					keep.set(m, n.get(m))
				}
				keep.set("mine", &jnode{kind: jScalar, raw: `"kept"`})
				raw = string(keep.encode())
			}
			if p.format == formatTOML {
				raw = "model = \"mine\"\n\n" + raw + "\n[mcp_servers.agent-rewind.env]\nA = \"1\"\n\n[other]\nk = 1\n"
			}
			path := p.Path(req.Loc)
			os.MkdirAll(filepath.Dir(path), 0o755)
			if err := os.WriteFile(path, []byte(raw), 0o755); err != nil {
				t.Fatal(err)
			}
			copied[path] = raw
		}
		if _, err := Run(req); err != nil {
			t.Fatalf("%s: %v", client, err)
		}
		for path := range copied {
			b, _ := os.ReadFile(path)
			s := string(b)
			if strings.Contains(s, "${CLAUDE_PLUGIN_ROOT}") || !strings.Contains(s, "/opt/ar/bin/agent-rewind") {
				t.Errorf("%s: %s", client, s)
			}
			if n := strings.Count(s, "agent-rewind-hook guard --checkpoint") + strings.Count(s, `"guard", "--checkpoint"`); n > 1 {
				t.Errorf("%s: %s runs the guard before a call %d times:\n%s", client, path, n, s)
			}
			if regexpBare.MatchString(s) || strings.Contains(s, `command = "agent-rewind"`) || strings.Contains(s, `"command": "agent-rewind"`) {
				t.Errorf("%s: %s still runs a bare agent-rewind:\n%s", client, path, s)
			}
			for _, mine := range []string{`"mine"`, "[other]"} {
				if strings.Contains(copied[path], mine) && !strings.Contains(s, mine) {
					t.Errorf("%s: %s lost %s:\n%s", client, path, mine, s)
				}
			}
		}
		req.Remove = true
		if _, err := Run(req); err != nil {
			t.Fatalf("%s --remove: %v", client, err)
		}
		for path, raw := range copied {
			b, _ := os.ReadFile(path)
			switch {
			case strings.HasSuffix(path, ".json"):
				a, _ := parseJSON([]byte(raw))
				g, err := parseJSON(b)
				if err != nil || !equal(a, g) {
					t.Errorf("%s: %s after --remove:\n%s\nwant what was there:\n%s", client, path, b, raw)
				}
			case strings.HasSuffix(path, ".toml"):
				want, _ := parseTOML(raw)
				got, err := parseTOML(string(b))
				if err != nil || !tomlEqual(got, want) {
					t.Errorf("%s: %s after --remove (%v):\n%s\nwant what was there:\n%s", client, path, err, b, raw)
				}
			default:
				if string(b) != raw {
					t.Errorf("%s: %s after --remove:\n%s\nwant what was there:\n%s", client, path, b, raw)
				}
			}
		}
	}
}

// A hook script of the user's own that does not run the guard is kept, and said so.
func TestSetupKeepsTheUsersOwnScript(t *testing.T) {
	req := testRequest(t, "cline", ScopeProject)
	path := filepath.Join(req.Loc.Root, ".clinerules", "hooks", "PreToolUse")
	os.MkdirAll(filepath.Dir(path), 0o755)
	mine := "#!/bin/sh\necho '{\"cancel\":false}'\n"
	os.WriteFile(path, []byte(mine), 0o755)
	res, err := Run(req)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != mine {
		t.Errorf("the user's script was changed:\n%s", b)
	}
	if len(res.Files[0].Kept) != 1 || !strings.Contains(res.Files[0].Kept[0].Why, "of your own") {
		t.Errorf("setup does not say it kept the user's script: %+v", res.Files[0])
	}
}

// regexpBare finds a command that runs agent-rewind by name, not by path.
var regexpBare = regexp.MustCompile(`(^|[\s;&|"]|exec )agent-rewind(-hook)? guard`)

// tomlEqual reports whether two TOML values are the same, tables in any order.
func tomlEqual(a, b *tval) bool {
	if a.kind != b.kind || a.str != b.str || len(a.arr) != len(b.arr) || len(a.keys) != len(b.keys) {
		return false
	}
	for i := range a.arr {
		if !tomlEqual(a.arr[i], b.arr[i]) {
			return false
		}
	}
	for k, v := range a.sub {
		w, ok := b.sub[k]
		if !ok || !tomlEqual(v, w) {
			return false
		}
	}
	return true
}

// .github/hooks/agent-rewind.json serves VS Code and Copilot: --remove for one leaves the other's
// hooks, and the second --remove takes them out.
func TestSetupSharedFile(t *testing.T) {
	req := testRequest(t, "vscode", ScopeProject)
	copilot := req
	copilot.Client, _ = ClientNamed("copilot")
	for _, r := range []Request{req, copilot} {
		if _, err := Run(r); err != nil {
			t.Fatal(err)
		}
	}
	hooks := filepath.Join(req.Loc.Root, ".github", "hooks", "agent-rewind.json")
	copilot.Remove = true
	if _, err := Run(copilot); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(hooks); err != nil || !strings.Contains(string(b), "guard") {
		t.Fatalf("setup copilot --remove took VS Code's hooks too: %v %s", err, b)
	}
	if _, err := os.Stat(filepath.Join(req.Loc.Root, ".github", "mcp.json")); err == nil {
		t.Error("setup copilot --remove left Copilot's own .github/mcp.json")
	}
	req.Remove = true
	if _, err := Run(req); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(hooks); err == nil {
		t.Error("the last --remove left the shared hooks file")
	}
}
