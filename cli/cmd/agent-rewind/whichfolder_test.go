package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/mcpserver"
)

// The tests of the one rule for which folder a session protects (docs/agents.md, "Which folder:
// the rules"), through every entry point: the plugin's hooks (agent-rewind-hook), the guard, the
// MCP server as the plugin and as "claude mcp add" start it, and the CLI.

// choiceJSON is the workspaceChoice member of --json outputs.
type choiceJSON struct {
	Root, Rule, Folder, By, Why string
}

// subfolderRepo makes a repository with a subfolder and a state folder of its own, and returns
// both folders (symlinks resolved, as the outputs name them).
func subfolderRepo(t *testing.T) (repo, sub string) {
	t.Helper()
	t.Setenv("REWIND_STATE_DIR", t.TempDir())
	repo, _ = filepath.EvalSymlinks(t.TempDir())
	sub = filepath.Join(repo, "web")
	writeFile(t, filepath.Join(repo, "README.md"), "v0\n")
	writeFile(t, filepath.Join(sub, "app.js"), "let v = 0\n")
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	return repo, sub
}

// claudeEnv is the environment Claude Code gives hooks and MCP servers of a session started in
// dir.
func claudeEnv(dir string) []string {
	return envWithout([]string{"CLAUDE_PROJECT_DIR", mcpserver.EnvProfile}, "CLAUDE_PROJECT_DIR="+dir)
}

// A Claude Code session started in a subfolder of a repository: the plugin's hooks (which pass
// --workspace ${CLAUDE_PROJECT_DIR}, the subfolder), the plugin's MCP server (the same flag), an
// MCP server added with "claude mcp add" (no flag) and the CLI run in the subfolder all protect
// the repository, write to its one store, and say which folder and why.
func TestSubfolderSessionProtectsTheRepository(t *testing.T) {
	repo, sub := subfolderRepo(t)
	env := claudeEnv(sub)
	in := hookInput(t, "PreToolUse", "Bash", map[string]any{"command": "npm install"}, "toolu_SUB1", map[string]any{"cwd": sub})

	// The plugin's guard, through agent-rewind guard --json, says which folder and why (a call
	// that is not an effect makes no store).
	r := runIn(t, sub, env, in, "--workspace", sub, "--json", "guard")
	var g struct {
		Admitted        bool
		WorkspaceChoice choiceJSON
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &g) != nil || !g.Admitted {
		t.Fatalf("guard --json: %+v", r)
	}
	if want := (choiceJSON{repo, "--workspace", sub, "repository", "--workspace " + sub + ", in the repository " + repo}); g.WorkspaceChoice != want {
		t.Fatalf("guard's workspaceChoice %+v, want %+v", g.WorkspaceChoice, want)
	}
	// The plugin's PreToolUse hook, through agent-rewind-hook and the guard server.
	if r := hookCall(t, sub, in, env, "--workspace", sub, "guard", "--checkpoint"); r.code != 0 || r.stdout != "" {
		t.Fatalf("the plugin's PreToolUse hook: %+v", r)
	}
	if !hasStore(t, repo) || hasStore(t, sub) {
		t.Fatalf("the hook's checkpoint: store for the repository %v, for the subfolder %v; want the repository's only", hasStore(t, repo), hasStore(t, sub))
	}
	// From now on the repository is found by its store.
	inRepo := ", in " + repo + ", which has a store"

	// README.md is outside the subfolder: a rewind of the session restores it too.
	writeFile(t, filepath.Join(repo, "README.md"), "v1\n")

	// The plugin's MCP server, and one added with "claude mcp add".
	for _, c := range []struct {
		name, why string
		args      []string
	}{
		{"plugin", "--workspace " + sub + inRepo, []string{"--workspace", sub, "mcp"}},
		{"claude mcp add", "CLAUDE_PROJECT_DIR " + sub + inRepo, []string{"mcp"}},
	} {
		cs, stderr := startMCPClient(t, sub, env, "", nil, c.args...)
		cp := mcpOK[mcpserver.CheckpointResult](t, cs, "checkpoint", map[string]any{"label": c.name})
		if cp.Workspace != repo {
			t.Fatalf("%s: checkpoint of %s, want the repository %s", c.name, cp.Workspace, repo)
		}
		if want := "agent-rewind mcp: workspace " + repo + " (chosen by " + c.why + ")"; !strings.Contains(stderr.String(), want) {
			t.Fatalf("%s: stderr %q lacks %q", c.name, stderr, want)
		}
	}

	// The CLI in the subfolder.
	r = run(t, sub, "", "--json", "checkpoint", "from the CLI")
	var cp struct {
		ID              string
		WorkspaceChoice choiceJSON
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &cp) != nil {
		t.Fatalf("checkpoint --json in the subfolder: %+v", r)
	}
	if want := (choiceJSON{repo, "the working directory", sub, "store", "the working directory " + sub + inRepo}); cp.WorkspaceChoice != want {
		t.Fatalf("checkpoint's workspaceChoice %+v, want %+v", cp.WorkspaceChoice, want)
	}
	if want := "agent-rewind: workspace " + repo + " (the working directory " + sub + inRepo + "; --exact-workspace takes " + sub + " alone)\n"; r.stderr != want {
		t.Fatalf("checkpoint's stderr %q, want %q", r.stderr, want)
	}
	// One store: the same from the subfolder and from the repository, holding all of it.
	storeID := func(dir string, args ...string) string {
		r := run(t, dir, "", append(args, "--json", "store")...)
		var s struct{ ID string }
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &s) != nil || s.ID == "" {
			t.Fatalf("store --json in %s: %+v", dir, r)
		}
		return s.ID
	}
	if a, b := storeID(sub), storeID(repo, "--workspace", sub); a != storeID(repo) || b != a {
		t.Fatalf("stores: %s from the subfolder, %s by --workspace, %s from the repository", a, b, storeID(repo))
	}
	tl := listJSON(t, repo)
	if len(tl.Checkpoints) != 4 || len(tl.Sessions) != 1 || tl.Sessions[0].Calls[0].ID != "toolu_SUB1" {
		t.Fatalf("the repository's timeline: %+v", tl)
	}

	// The MCP server in the subfolder rewinds the whole repository to before the hook's call.
	cs, _ := startMCPClient(t, sub, env, "", nil, "--workspace", sub, "mcp")
	mcpOK[mcpserver.RestoreResult](t, cs, "rewind", map[string]any{"id": "toolu_SUB1"})
	if got := readFile(t, filepath.Join(repo, "README.md")); got != "v0\n" {
		t.Fatalf("after rewind toolu_SUB1, README.md (outside the subfolder) is %q", got)
	}
	verifyChain(t, repo)
}

// A person who wants one subfolder of a repository on its own says so once, with
// --exact-workspace: its store makes every entry point choose it from then on, with no flag.
func TestExactWorkspaceKeepsASubfolder(t *testing.T) {
	repo, sub := subfolderRepo(t)
	// As docs/agents.md shows it, in the repository.
	r := run(t, repo, "", "--workspace", "web", "--exact-workspace", "checkpoint")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "checkpoint ") || r.stderr != "" {
		t.Fatalf("checkpoint --exact-workspace: %+v", r)
	}
	r = run(t, repo, "", "--workspace", "web", "--exact-workspace", "--json", "store")
	var st struct{ WorkspaceChoice choiceJSON }
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &st) != nil {
		t.Fatalf("store --exact-workspace: %+v", r)
	}
	if want := (choiceJSON{sub, "--workspace", sub, "exact", "--workspace " + sub + ", exactly (--exact-workspace)"}); st.WorkspaceChoice != want {
		t.Fatalf("workspaceChoice %+v, want %+v", st.WorkspaceChoice, want)
	}
	if !hasStore(t, sub) || hasStore(t, repo) {
		t.Fatalf("stores: subfolder %v, repository %v", hasStore(t, sub), hasStore(t, repo))
	}

	env := claudeEnv(sub)
	in := hookInput(t, "PreToolUse", "Bash", map[string]any{"command": "make"}, "toolu_X1", map[string]any{"cwd": sub})
	if r := hookCall(t, sub, in, env, "--workspace", sub, "guard", "--checkpoint"); r.code != 0 {
		t.Fatalf("the plugin's hook: %+v", r)
	}
	r = runIn(t, sub, env, in, "--workspace", sub, "--json", "guard")
	var g struct{ WorkspaceChoice choiceJSON }
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &g) != nil || g.WorkspaceChoice.Root != sub || g.WorkspaceChoice.By != "store" {
		t.Fatalf("guard --json: %+v", r)
	}
	cs, stderr := startMCPClient(t, sub, env, "", nil, "mcp")
	if got := mcpOK[mcpserver.CheckpointResult](t, cs, "checkpoint", nil); got.Workspace != sub {
		t.Fatalf("the MCP server checkpointed %s, want the subfolder", got.Workspace)
	}
	if want := "(chosen by CLAUDE_PROJECT_DIR " + sub + ", which has a store)"; !strings.Contains(stderr.String(), want) {
		t.Fatalf("stderr %q lacks %q", stderr, want)
	}
	deeper := filepath.Join(sub, "src")
	writeFile(t, filepath.Join(deeper, "x.js"), "x\n")
	if r := run(t, deeper, "", "--json", "store"); r.code != 0 || !strings.Contains(r.stdout, `"root": "`+sub+`"`) || !strings.Contains(r.stdout, `"by": "store"`) {
		t.Fatalf("store in a folder below the subfolder: %+v", r)
	}
	// The hook's checkpoint is the first (nothing changed since), then the MCP server's.
	if tl := listJSON(t, sub); len(tl.Checkpoints) != 2 || len(tl.Sessions) != 1 || tl.Sessions[0].Calls[0].Checkpoint != tl.Checkpoints[0].ID {
		t.Fatalf("the subfolder's timeline: %+v", tl)
	}
	if hasStore(t, repo) {
		t.Fatal("the repository got a store of its own")
	}
}

// Issue 27: the CLI refuses what the guard and the MCP server refuse (the home folder, an
// agent's own folder, a plugin cache, /), whatever --state-dir says, with what to do; a person
// who really wants such a folder says --exact-workspace.
func TestCLIRefusesFoldersThatAreNotProjects(t *testing.T) {
	home, _ := filepath.EvalSymlinks(t.TempDir())
	t.Setenv("REWIND_STATE_DIR", t.TempDir()) // outside the home folder: not why it is refused
	env := envWithout([]string{"HOME", "CLAUDE_PROJECT_DIR"}, "HOME="+home)
	writeFile(t, filepath.Join(home, "notes.txt"), "private\n")
	cache := filepath.Join(home, ".claude", "plugins", "cache", "m", "agent-rewind", "1.0.0")
	writeFile(t, filepath.Join(cache, "README.md"), "a plugin\n")
	protectRoot(t)
	for _, c := range []struct {
		dir  string
		args []string
		why  string
	}{
		{home, []string{"checkpoint"}, "the home folder"},
		{home, []string{"--state-dir", t.TempDir(), "checkpoint"}, "the home folder"}, // what the old message advised
		// The state folder in the home folder, where it is by default: refused as the home folder,
		// not as a state folder inside the workspace (whose advice, --state-dir, led to the above).
		{home, []string{"--state-dir", filepath.Join(home, ".local", "state", "agent-rewind"), "checkpoint"}, "the home folder"},
		{home, []string{"list"}, "the home folder"},
		{home, []string{"store"}, "the home folder"},
		{home, []string{"rewind", "abc"}, "the home folder"},
		{t.TempDir(), []string{"--workspace", filepath.Join(home, ".codex"), "checkpoint"}, "an agent's own folder"},
		{cache, []string{"checkpoint"}, "a plugin cache"},
		{"/", []string{"checkpoint"}, "the filesystem root"},
		{filepath.Dir(home), []string{"checkpoint"}, "a folder that holds the home folder"},
	} {
		if c.dir != "/" {
			os.MkdirAll(filepath.Join(home, ".codex"), 0o755)
		}
		r := runIn(t, c.dir, env, "", c.args...)
		if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "refusing workspace") || !strings.Contains(r.stderr, c.why) ||
			!strings.Contains(r.stderr, "run agent-rewind in the project's folder, or name it with --workspace DIR") || strings.Contains(r.stderr, "--state-dir") {
			t.Errorf("%v in %s: %+v; want exit 1 naming %q and what to do", c.args, c.dir, r, c.why)
		}
	}
	noStoreFor(t, home)
	noStoreFor(t, cache)
	r := runIn(t, home, env, "", "--json", "checkpoint")
	var fail struct {
		Error    string
		ExitCode int
	}
	if r.code != 1 || json.Unmarshal([]byte(r.stdout), &fail) != nil || fail.ExitCode != 1 || !strings.Contains(fail.Error, "the home folder") {
		t.Fatalf("checkpoint --json in the home folder: %+v", r)
	}
	// An explicit effect in the home folder is refused too, as the guard refuses what it cannot
	// record in the right place.
	if r := runIn(t, home, env, "", "guard", `{"key": "deploy:1"}`); r.code != 2 || !strings.Contains(r.stderr, "the home folder") {
		t.Fatalf("guard in the home folder: %+v", r)
	}
	noStoreFor(t, home)

	// A person's deliberate choice.
	r = runIn(t, home, env, "", "--exact-workspace", "--json", "checkpoint")
	var cp struct {
		ID              string
		WorkspaceChoice choiceJSON
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &cp) != nil || cp.WorkspaceChoice.Root != home || cp.WorkspaceChoice.By != "exact" {
		t.Fatalf("checkpoint --exact-workspace in the home folder: %+v", r)
	}
	if r := runIn(t, home, env, "", "--exact-workspace", "list"); r.code != 0 || !strings.Contains(r.stdout, cp.ID) {
		t.Fatalf("list --exact-workspace: %+v", r)
	}
	if r := runIn(t, home, env, "", "--exact-workspace", "--json", "guard", `{"key": "deploy:1"}`); r.code != 0 || !strings.Contains(r.stdout, `"by": "exact"`) {
		t.Fatalf("guard --exact-workspace in the home folder: %+v", r)
	}
	if r := runIn(t, home, env, "", "list"); r.code != 1 || !strings.Contains(r.stderr, "the home folder") {
		t.Fatalf("list in the home folder without --exact-workspace, which has a store now: %+v", r)
	}
	// A folder under it in no repository is its own workspace: the home folder's store does not
	// swallow it.
	docs := filepath.Join(home, "docs")
	writeFile(t, filepath.Join(docs, "a.md"), "a\n")
	if r := runIn(t, docs, env, "", "--json", "store"); r.code != 1 || !strings.Contains(r.stdout, docs+" has no store") {
		t.Fatalf("store in a folder under a home folder that has a store: %+v", r)
	}
}

// --exact-workspace holds for the MCP server too, whichever source names the folder: here
// CLAUDE_PROJECT_DIR, a subfolder of a repository.
func TestExactWorkspaceMCP(t *testing.T) {
	repo, sub := subfolderRepo(t)
	cs, stderr := startMCPClient(t, t.TempDir(), claudeEnv(sub), "", nil, "--exact-workspace", "mcp")
	if got := mcpOK[mcpserver.CheckpointResult](t, cs, "checkpoint", nil); got.Workspace != sub {
		t.Fatalf("checkpoint of %s, want the subfolder %s", got.Workspace, sub)
	}
	if want := "(chosen by CLAUDE_PROJECT_DIR " + sub + ", exactly (--exact-workspace))"; !strings.Contains(stderr.String(), want) {
		t.Fatalf("stderr %q lacks %q", stderr, want)
	}
	if hasStore(t, repo) {
		t.Fatal("the repository got a store")
	}
}

// In a subfolder that stands for its repository, restore takes paths as a shell command does:
// relative to the folder it runs in; its undo command works from there too.
func TestRestoreFromASubfolder(t *testing.T) {
	repo, sub := subfolderRepo(t)
	r := run(t, sub, "", "--json", "checkpoint")
	var cp struct{ ID string }
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &cp) != nil {
		t.Fatalf("checkpoint: %+v", r)
	}
	writeFile(t, filepath.Join(sub, "app.js"), "let v = 1\n")
	writeFile(t, filepath.Join(repo, "README.md"), "v1\n")
	writeFile(t, filepath.Join(repo, "app.js"), "a file of the same name at the top\n")
	r = run(t, sub, "", "--json", "restore", cp.ID, "--", "app.js")
	var out struct {
		Paths []string
		Undo  string
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &out) != nil || len(out.Paths) != 1 || out.Paths[0] != "web/app.js" {
		t.Fatalf("restore app.js in web/: %+v", r)
	}
	if got := readFile(t, filepath.Join(sub, "app.js")); got != "let v = 0\n" {
		t.Fatalf("web/app.js is %q", got)
	}
	// The file of the same name at the top was not the one meant: the checkpoint lacks it, and a
	// restore of it would have deleted it.
	if got := readFile(t, filepath.Join(repo, "app.js")); got == "<absent>" || readFile(t, filepath.Join(repo, "README.md")) != "v1\n" {
		t.Fatalf("restore in web/ touched the repository's top: app.js %q", got)
	}
	if r := run(t, sub, "", "restore", cp.ID, "--", "../README.md"); r.code != 0 || readFile(t, filepath.Join(repo, "README.md")) != "v0\n" {
		t.Fatalf("restore ../README.md in web/: %+v", r)
	}
	if want := " -- app.js"; !strings.HasSuffix(out.Undo, want) {
		t.Fatalf("undo %q does not name the path as given in web/", out.Undo)
	}
	if r := run(t, sub, "", strings.Fields(out.Undo)[1:]...); r.code != 0 || readFile(t, filepath.Join(sub, "app.js")) != "let v = 1\n" {
		t.Fatalf("the undo command in web/: %+v", r)
	}
}
