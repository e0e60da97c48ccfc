package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/cli/internal/workspace"
	"github.com/agent-rewind/rewind/hashchain"
	"github.com/agent-rewind/rewind/mcpserver"
)

// End-to-end tests of where the store lives (docs/store.md): outside the workspace, found by
// the folder's identity, so that nothing an agent runs inside the workspace erases the history
// or re-arms a spent effect.

// blastWorkspace is a git repository with one commit and an ignored .env, checkpointed once
// (returned) after a deploy was admitted and spent through the guard.
func blastWorkspace(t *testing.T, root string) (cp string, before tree) {
	t.Helper()
	bash(t, root, `
git init -q .
printf 'app\n' > app.txt
printf '.env\n' > .gitignore
printf 'SECRET=1\n' > .env
git add -A && git commit -qm one
printf 'work in progress\n' > app.txt
printf 'untracked\n' > notes.txt`)
	cp = jsonOK[struct{ ID string }](t, root, "checkpoint", "before").ID
	spend(t, root)
	return cp, readTree(t, root)
}

// spend admits the deploy effect "deploy-prod" through the guard (explicit form).
func spend(t *testing.T, root string) {
	t.Helper()
	if d := decision(t, guard(t, root, deployEffect, "--json")); !d.Admitted {
		t.Fatalf("first deploy: %+v", d)
	}
}

const deployEffect = `{"key": "deploy-prod", "payload": {"env": "prod"}, "description": "deploy to prod"}`

// stillProtected checks, in the workspace at root, that the rewind to cp is exact, the chain
// verifies and the spent effect is still refused.
func stillProtected(t *testing.T, root, cp string, before tree) {
	t.Helper()
	ok(t, root, "rewind", cp)
	if d := treeDiff(before, readTree(t, root)); d != "" {
		t.Fatalf("rewind to %s is not exact:\n%s", cp, d)
	}
	verifyChain(t, root)
	r := guard(t, root, deployEffect, "--json")
	if r.code != 2 || decision(t, r).Admitted {
		t.Fatalf("the spent deploy was admitted again: %+v", r)
	}
	if _, err := os.Lstat(filepath.Join(root, workspace.LegacyDir)); err == nil {
		t.Fatal("a store appeared inside the workspace")
	}
}

// TestStoreSurvivesWhatAgentsRun: git clean -fdx and rm -rf of every file (dotfiles too) leave
// the history and the effect ledger untouched.
func TestStoreSurvivesWhatAgentsRun(t *testing.T) {
	for name, script := range map[string]string{
		"git clean -fdx":      `git clean -fdxq && git checkout -q -- . && rm -rf .git`,
		"rm -rf everything":   `rm -rf ./* ./.[!.]* ./..?*`,
		"git reset and stash": `git stash -q -u && git reset -q --hard && git checkout -q --detach`,
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			cp, before := blastWorkspace(t, root)
			store := stateDir(t, root)
			bash(t, root, script)
			if got := stateDir(t, root); got != store {
				t.Fatalf("store %s after %s, was %s", got, name, store)
			}
			stillProtected(t, root, cp, before)
		})
	}
}

// TestStoreFollowsAMovedWorkspace: a folder moved within its file system keeps its store.
func TestStoreFollowsAMovedWorkspace(t *testing.T) {
	parent := t.TempDir()
	root := filepath.Join(parent, "ws")
	os.Mkdir(root, 0o755)
	cp, before := blastWorkspace(t, root)
	moved := filepath.Join(parent, "renamed")
	if err := os.Rename(root, moved); err != nil {
		t.Fatal(err)
	}
	r := ok(t, moved, "list")
	if !strings.Contains(r.stderr, "new path") || !strings.Contains(r.stdout, cp) {
		t.Fatalf("list after the move: %+v", r)
	}
	stillProtected(t, moved, cp, before)
}

// TestRecreatedWorkspace: a folder deleted and made again at the same path is a new workspace:
// its commands work (never a cut chain) and start a new history, or, when a person adopts the
// old store, continue the old one with its spent effects.
func TestRecreatedWorkspace(t *testing.T) {
	t.Setenv(workspace.StateDirEnv, t.TempDir()) // its own state folder: gc --orphans sees only its stores
	root := filepath.Join(t.TempDir(), "ws")
	os.Mkdir(root, 0o755)
	cp, before := blastWorkspace(t, root)
	old := jsonOK[struct{ ID string }](t, root, "store")
	os.RemoveAll(root)
	os.Mkdir(root, 0o755)

	r := run(t, root, "", "list")
	if r.code != 1 || !strings.Contains(r.stderr, "no agent-rewind state here") || !strings.Contains(r.stderr, "store --adopt "+old.ID) {
		t.Fatalf("list in the new folder: %+v", r)
	}
	orphans := jsonOK[struct {
		DryRun  bool
		Orphans []struct{ ID, Root, Reason string }
	}](t, root, "gc", "--orphans", "--dry-run")
	if !orphans.DryRun || len(orphans.Orphans) != 1 || orphans.Orphans[0].ID != old.ID || !strings.Contains(orphans.Orphans[0].Reason, "now another folder") {
		t.Fatalf("gc --orphans --dry-run: %+v", orphans)
	}
	if txt := ok(t, root, "gc", "--orphans", "--dry-run").stdout; !strings.Contains(txt, "would remove store "+old.ID) || !strings.Contains(txt, "nothing was removed") {
		t.Fatalf("gc --orphans --dry-run:\n%s", txt)
	}

	// A new history: checkpoint, chain verify, and the effect is new here.
	other := t.TempDir()
	os.WriteFile(filepath.Join(root, "fresh.txt"), []byte("new"), 0o644)
	fresh := run(t, root, "", "checkpoint")
	if fresh.code != 0 || !strings.Contains(fresh.stderr, "new history") {
		t.Fatalf("checkpoint in the new folder: %+v", fresh)
	}
	verifyChain(t, root)
	if list := ok(t, root, "list"); strings.Contains(list.stdout, cp) {
		t.Fatalf("the new folder lists the old history:\n%s", list.stdout)
	}

	// Adopting the old store from yet another new folder continues its history.
	os.RemoveAll(root)
	os.Mkdir(root, 0o755)
	adopted := jsonOK[struct {
		ID      string
		Adopted bool
	}](t, other, "--workspace", root, "store", "--adopt", old.ID)
	if adopted.ID != old.ID || !adopted.Adopted {
		t.Fatalf("store --adopt: %+v", adopted)
	}
	stillProtected(t, root, cp, before)

	// The store of the second folder is now an orphan; gc --orphans removes it and only it.
	if txt := ok(t, other, "gc", "--orphans", "--dry-run").stdout; strings.Contains(txt, old.ID) || !strings.Contains(txt, "would remove store ") {
		t.Fatalf("gc --orphans --dry-run after the adoption:\n%s", txt)
	}
	gone := jsonOK[struct {
		Orphans    []struct{ ID, Dir string }
		BytesFreed int64
	}](t, other, "gc", "--orphans")
	if len(gone.Orphans) != 1 || gone.Orphans[0].ID == old.ID || gone.BytesFreed == 0 {
		t.Fatalf("gc --orphans: %+v", gone)
	}
	if _, err := os.Stat(gone.Orphans[0].Dir); !os.IsNotExist(err) {
		t.Fatalf("orphan %s still there: %v", gone.Orphans[0].Dir, err)
	}
	if txt := ok(t, other, "gc", "--orphans").stdout; !strings.Contains(txt, "no orphan stores") {
		t.Fatalf("gc --orphans with none left:\n%s", txt)
	}
	verifyChain(t, root)
}

// TestStoreCommand: "store" says where the store is, and checkpoint and rewind say it too.
func TestStoreCommand(t *testing.T) {
	root := t.TempDir()
	if r := run(t, root, "", "store"); r.code != 1 || !strings.Contains(r.stderr, "no agent-rewind state here") {
		t.Fatalf("store before a checkpoint: %+v", r)
	}
	os.WriteFile(filepath.Join(root, "a"), []byte("a"), 0o644)
	cp := jsonOK[struct{ ID, Store string }](t, root, "checkpoint")
	s := ok(t, root, "--json", "store")
	hasMembers(t, s.stdout, "workspace", "store", "id", "stateDir", "anchor", "identity", "bytes", "created")
	var st struct {
		Workspace, Store, ID, StateDir string
		Bytes                          int64
	}
	json.Unmarshal([]byte(s.stdout), &st)
	if st.Store != cp.Store || st.Store != stateDir(t, root) || st.Bytes == 0 || !strings.HasPrefix(st.Store, st.StateDir) || strings.HasPrefix(st.Store, st.Workspace) {
		t.Fatalf("store --json %+v; checkpoint said %s", st, cp.Store)
	}
	rw := jsonOK[struct{ Store string }](t, root, "rewind", cp.ID)
	if rw.Store != st.Store {
		t.Fatalf("rewind --json store %q, want %q", rw.Store, st.Store)
	}
	if txt := ok(t, root, "store").stdout; !strings.Contains(txt, st.Store) || !strings.Contains(txt, st.ID) {
		t.Fatalf("store: %s", txt)
	}
	// --state-dir chooses another state folder, for this process and what it starts.
	elsewhere := t.TempDir()
	other := jsonOK[struct{ Store string }](t, root, "--state-dir", elsewhere, "checkpoint")
	if !strings.HasPrefix(other.Store, elsewhere) {
		t.Fatalf("--state-dir %s: store %s", elsewhere, other.Store)
	}
	if r := run(t, root, "", "--state-dir", filepath.Join(root, "state"), "checkpoint"); r.code != 1 || !strings.Contains(r.stderr, "inside the workspace") {
		t.Fatalf("a state folder inside the workspace: %+v", r)
	}
}

// TestStoreNeverStagedByGit (finding 10): git add -A in the workspace stages nothing of the
// store, and a state folder that sits inside some other repository ignores itself there.
func TestStoreNeverStagedByGit(t *testing.T) {
	repo := t.TempDir()
	bash(t, repo, "git init -q .")
	t.Setenv(workspace.StateDirEnv, filepath.Join(repo, "state"))
	root := t.TempDir()
	blastWorkspace(t, root)
	ok(t, root, "checkpoint", "second")
	if staged := bash(t, root, "git add -A && git diff --cached --name-only"); staged != "app.txt\nnotes.txt\n" {
		t.Fatalf("git add -A in the workspace staged:\n%s", staged)
	}
	if staged := bash(t, repo, "git add -A && git diff --cached --name-only"); staged != "" {
		t.Fatalf("git add -A in the repository holding the state folder staged:\n%s", staged)
	}
}

// legacyWorkspace makes, in a fresh folder, a store as earlier versions kept it: <root>/.rewind
// with its chain anchored by the root's path under REWIND_STATE_DIR. It returns the root, the
// first checkpoint's id and tree.
func legacyWorkspace(t *testing.T, files int) (root, cp string, before tree) {
	t.Helper()
	root, _ = filepath.EvalSymlinks(t.TempDir())
	for i := range files {
		os.WriteFile(filepath.Join(root, "f"+string(rune('a'+i%26))+strings.Repeat("x", i/26)), []byte(strings.Repeat("data ", i+1)), 0o644)
	}
	// Made by this version in a scratch state folder, then put where earlier versions kept it.
	legacyState := os.Getenv(workspace.StateDirEnv)
	t.Setenv(workspace.StateDirEnv, t.TempDir())
	cp = jsonOK[struct{ ID string }](t, root, "checkpoint", "legacy").ID
	before = readTree(t, root)
	spend(t, root)
	ok(t, root, "checkpoint", "later")
	w, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	anchor, _ := w.ChainAnchor()
	head, _ := os.ReadFile(anchor)
	bash(t, root, "cp -a "+w.Meta+" .rewind && rm .rewind/store.json .rewind/.gitignore")
	t.Setenv(workspace.StateDirEnv, legacyState)
	oldAnchor, err := hashchain.AnchorPath(root)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(oldAnchor), 0o700)
	if err := os.WriteFile(oldAnchor, head, 0o600); err != nil {
		t.Fatal(err)
	}
	return root, cp, before
}

// TestLegacyStoreMigratedAndGitBringsItBack: a .rewind/ of an earlier version, even committed
// to git, moves out with one message; git stash, checkout and reset that bring the old files
// back change nothing: the stale copy is removed and the history is the moved store's.
func TestLegacyStoreMigratedAndGitBringsItBack(t *testing.T) {
	t.Setenv(workspace.StateDirEnv, t.TempDir())
	root, cp, before := legacyWorkspace(t, 5)
	bash(t, root, "git init -q . && git add -A && git commit -qm 'with .rewind committed, as earlier versions allowed'")
	before = readTree(t, root) // .git included
	r := ok(t, root, "list")
	if strings.Count(r.stderr, "moved this workspace's store") != 1 || !strings.Contains(r.stdout, cp) {
		t.Fatalf("first command after the upgrade: %+v", r)
	}
	if _, err := os.Lstat(filepath.Join(root, workspace.LegacyDir)); !os.IsNotExist(err) {
		t.Fatalf(".rewind/ is still in the workspace: %v", err)
	}
	if r := ok(t, root, "list"); r.stderr != "" {
		t.Fatalf("a second message: %q", r.stderr)
	}
	verifyChain(t, root)
	for _, script := range []string{"git stash -q", "git checkout -q -- .", "git reset -q --hard"} {
		bash(t, root, script)
		if _, err := os.Lstat(filepath.Join(root, workspace.LegacyDir, "chain.jsonl")); err != nil {
			t.Fatalf("%s did not bring .rewind/ back (%v): the test does not test anything", script, err)
		}
		r := ok(t, root, "list")
		if !strings.Contains(r.stderr, "removed "+filepath.Join(root, workspace.LegacyDir)) || !strings.Contains(r.stdout, "later") {
			t.Fatalf("list after %s: %+v", script, r)
		}
		verifyChain(t, root)
	}
	bash(t, root, "git reset -q --hard && rm -rf .rewind") // the workspace as the checkpoint saw it, .git's index aside
	ok(t, root, "rewind", cp)
	if d := treeDiff(before, readTree(t, root)); d != "" && !strings.Contains(d, ".rewind") && !strings.Contains(d, ".git/") {
		t.Fatalf("rewind after the migration:\n%s", d)
	}
	if r := guard(t, root, deployEffect, "--json"); r.code != 2 {
		t.Fatalf("the effect spent before the migration was admitted: %+v", r)
	}
}

// TestWorktreeCheckpointSaysWhatIsNotCaptured: in a git worktree .git is a file pointing into
// the main repository; the checkpoint says that HEAD, index and branch are not captured.
func TestWorktreeCheckpointSaysWhatIsNotCaptured(t *testing.T) {
	main := t.TempDir()
	wt := filepath.Join(t.TempDir(), "wt")
	bash(t, main, "git init -q . && echo a > a && git add -A && git commit -qm a && git worktree add -q -b feature "+wt)
	r := ok(t, wt, "checkpoint")
	if !strings.Contains(r.stdout, "git worktree") || !strings.Contains(r.stdout, "not the worktree's HEAD, index or branch") {
		t.Fatalf("checkpoint of a worktree:\n%s", r.stdout)
	}
	var out struct{ Warnings []string }
	json.Unmarshal([]byte(ok(t, wt, "--json", "checkpoint").stdout), &out)
	if len(out.Warnings) != 1 || !strings.Contains(out.Warnings[0], filepath.Join(main, ".git", "worktrees")) {
		t.Fatalf("checkpoint --json warnings: %q", out.Warnings)
	}
	if r := ok(t, main, "checkpoint"); strings.Contains(r.stdout, "worktree") {
		t.Fatalf("checkpoint of the main repository warns:\n%s", r.stdout)
	}

	// A rewind in the worktree restores its files exactly and keeps the ledger; the branch,
	// which lives in the shared repository, stays where the later commit put it, as the note said.
	cp := jsonOK[struct{ ID string }](t, wt, "checkpoint", "before").ID
	before := readTree(t, wt)
	head := strings.TrimSpace(bash(t, wt, "git rev-parse HEAD"))
	spend(t, wt)
	bash(t, wt, "echo b > b && git add -A && git commit -qm b && git clean -fdxq")
	stillProtected(t, wt, cp, before)
	if now := strings.TrimSpace(bash(t, wt, "git rev-parse HEAD")); now == head {
		t.Fatalf("the worktree's HEAD was rewound to %s: the note says it is not", head)
	}
}

// TestMCPServerNoticesItsStoreRemoved: a store deleted under a running MCP server fails its
// next calls loudly; the server writes nothing and makes no half-empty store again.
func TestMCPServerNoticesItsStoreRemoved(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a"), 0o644)
	cs := startMCP(t, dir, mcpEnv())
	mcpOK[mcpserver.CheckpointResult](t, cs, "checkpoint", map[string]any{"label": "one"})
	store := stateDir(t, dir)
	if err := os.RemoveAll(store); err != nil {
		t.Fatal(err)
	}
	for _, call := range []struct {
		name string
		args map[string]any
	}{{"checkpoint", map[string]any{"label": "two"}}, {"guard_effect", map[string]any{"key": "deploy-1"}}, {"list", nil}} {
		msg := mcpToolError(t, cs, call.name, call.args)
		if !strings.Contains(msg, store) || !strings.Contains(msg, "removed or moved") || !strings.Contains(msg, "restart") {
			t.Fatalf("%s after the store was removed: %s", call.name, msg)
		}
	}
	if _, err := os.Lstat(store); !os.IsNotExist(err) {
		t.Fatalf("the server made %s again: %v", store, err)
	}
	if hasStore(t, dir) {
		t.Fatal("the server made a new store")
	}
}

// TestWorkspaceMovedAcrossFileSystems: a move to another file system is a copy and a delete, so
// the folder is new; the error says so and names the store to adopt, which continues the history.
func TestWorkspaceMovedAcrossFileSystems(t *testing.T) {
	shm, err := os.MkdirTemp("/dev/shm", "rewind-e2e-ws-")
	if err != nil {
		t.Skip("no /dev/shm, so no second file system:", err)
	}
	t.Cleanup(func() { os.RemoveAll(shm) })
	t.Setenv(workspace.StateDirEnv, t.TempDir())
	root := filepath.Join(t.TempDir(), "project")
	os.Mkdir(root, 0o755)
	cp, before := blastWorkspace(t, root)
	id := jsonOK[struct{ ID string }](t, root, "store").ID
	moved := filepath.Join(shm, "project")
	bash(t, shm, "mv "+root+" "+moved)
	r := run(t, moved, "", "list")
	if r.code != 1 || !strings.Contains(r.stderr, "moved here from "+root) || !strings.Contains(r.stderr, "store --adopt "+id) {
		t.Fatalf("list after a move across file systems: %+v", r)
	}
	ok(t, moved, "store", "--adopt", id)
	stillProtected(t, moved, cp, before)
}

// TestConcurrentFirstUse: processes that start at once in a fresh workspace, or in one with a
// legacy .rewind/, make or move exactly one store, and every checkpoint lands in it.
func TestConcurrentFirstUse(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		state := t.TempDir()
		t.Setenv(workspace.StateDirEnv, state)
		var root string
		if legacy {
			root, _, _ = legacyWorkspace(t, 3)
		} else {
			root = t.TempDir()
			os.WriteFile(filepath.Join(root, "a"), []byte("a"), 0o644)
		}
		const n = 6
		cmds := make([]*exec.Cmd, n)
		for i := range cmds {
			cmds[i] = exec.Command(bin, "--json", "checkpoint")
			cmds[i].Dir = root
			if err := cmds[i].Start(); err != nil {
				t.Fatal(err)
			}
		}
		for i, c := range cmds {
			if err := c.Wait(); err != nil {
				t.Fatalf("legacy %v: checkpoint %d: %v", legacy, i, err)
			}
		}
		stores, _ := os.ReadDir(filepath.Join(state, "stores"))
		if len(stores) != 1 {
			t.Fatalf("legacy %v: %d stores for one workspace: %v", legacy, len(stores), stores)
		}
		verifyChain(t, root)
		var list struct{ Checkpoints []json.RawMessage }
		json.Unmarshal([]byte(ok(t, root, "--json", "list").stdout), &list)
		if want := n + map[bool]int{false: 0, true: 2}[legacy]; len(list.Checkpoints) != want {
			t.Fatalf("legacy %v: %d checkpoints, want %d", legacy, len(list.Checkpoints), want)
		}
	}
}
