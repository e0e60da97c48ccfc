//go:build unix

// FIFOs: a Windows folder holds none (its pipes live under \\.\pipe\).

package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The state directory holds only regular files. A FIFO (or a socket, a device, a directory, a
// symlink) in place of one used to block the first command that opened it forever, and a guard
// that blocks lets the agent's hook time out, which lets the tool call run. Now every command
// fails at once, naming the path and what it found.

// promptly bounds each command of these tests. The commands take milliseconds; the bound only
// tells a hang (the bug) from a slow start of a -race binary on a loaded machine.
const promptly = 5 * time.Second

// runPromptly runs the binary like run, but fails the test if it has not exited within promptly.
func runPromptly(t *testing.T, dir, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), promptly)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	cmd.WaitDelay = time.Second
	start := time.Now()
	r := collect(t, cmd)
	if ctx.Err() != nil {
		t.Fatalf("%v hung: killed after %v\nstdout %q\nstderr %q", args, time.Since(start).Round(time.Millisecond), r.stdout, r.stderr)
	}
	return r
}

// mkfifo replaces whatever is at name with a FIFO.
func mkfifo(t *testing.T, name string) {
	t.Helper()
	if err := os.RemoveAll(name); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(name, 0o600); err != nil {
		t.Fatal(err)
	}
}

// fullStore makes a workspace whose store has every kind of state file: two checkpoints ("one"
// and "two", the current one), a spent effect key, the chain. It returns the workspace and the
// id of checkpoint "one".
func fullStore(t *testing.T) (ws, one string) {
	t.Helper()
	ws = t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, ws, "", "--json", "checkpoint", "one")
	var cp struct{ ID string }
	if err := json.Unmarshal([]byte(r.stdout), &cp); r.code != 0 || err != nil || cp.ID == "" {
		t.Fatalf("checkpoint one: %d %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := run(t, ws, "", "checkpoint", "two"); r.code != 0 {
		t.Fatalf("checkpoint two: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, ws, "", "guard", `{"key": "pay-1", "payload": {"amount": 1}}`); r.code != 0 {
		t.Fatalf("guard: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	return ws, cp.ID
}

// oneFile returns the one file under dir in the store, relative to the store.
func oneFile(t *testing.T, store, dir string) string {
	t.Helper()
	var found []string
	filepath.WalkDir(filepath.Join(store, dir), func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			rel, _ := filepath.Rel(store, p)
			found = append(found, rel)
		}
		return nil
	})
	if len(found) == 0 {
		t.Fatalf("no file under %s", filepath.Join(store, dir))
	}
	return found[0]
}

// saysFIFO checks that a failed command's stderr names the state file and says it is a FIFO.
// A wantCode of 0 is a command that must simply work (promptly: runPromptly kills a hang).
func saysFIFO(t *testing.T, what string, r result, wantCode int, rel string) {
	t.Helper()
	if wantCode == 0 {
		if r.code != 0 {
			t.Errorf("%s: exit %d (want 0):\nstdout %q\nstderr %q", what, r.code, r.stdout, r.stderr)
		}
		return
	}
	if r.code != wantCode || !strings.Contains(r.stderr, rel) || !strings.Contains(r.stderr, "is a FIFO, not a regular file") {
		t.Errorf("%s: exit %d (want %d), stderr does not name %s as a FIFO:\nstdout %q\nstderr %q", what, r.code, wantCode, rel, r.stdout, r.stderr)
	}
}

// A deciding guard (a hook's PreToolUse for an effect, or the explicit form) that cannot read
// the state it decides with refuses: exit 2, the same as a refusal, so the call does not run.
// A guard that exits 1 instead would be an error the hook might ignore.
const guardRefuses = 2

// A hook's PreToolUse for a call that is an effect by the built-in rules.
func pushHook(t *testing.T, id string) string {
	return bashHook(t, "PreToolUse", "git push origin main", id)
}

func TestStateFileFIFO(t *testing.T) {
	type command struct {
		args  []string // "ONE" stands for checkpoint "one"'s id
		stdin string
		code  int
	}
	list := command{args: []string{"list"}, code: 1}
	checkpoint := command{args: []string{"checkpoint"}, code: 1}
	rewindOne := command{args: []string{"rewind", "ONE"}, code: 1}
	effects := command{args: []string{"effects"}, code: 1}
	verify := command{args: []string{"chain", "verify"}, code: 1}
	explicit := command{args: []string{"guard", `{"key": "pay-2", "payload": {"amount": 2}}`}, code: guardRefuses}
	spentKey := command{args: []string{"guard", `{"key": "pay-1", "payload": {"amount": 1}}`}, code: guardRefuses}
	hook := func(id string) command {
		return command{args: []string{"guard"}, stdin: pushHook(t, id), code: guardRefuses}
	}
	works := func(c command) command { c.code = 0; return c }
	cases := []struct {
		name string
		file func(t *testing.T, store, one string) string // the state file to replace, relative to the store
		cmds []command
	}{
		// Every object, loose and packed (rel is then the packs' folder, where the small contents
		// are), so that restoring "one" meets one; the rewind fails naming it and puts the
		// workspace back (a target it cannot read is undone), so the commands after it work:
		// none of them reads an object.
		{"object", fixed("packs/"), []command{rewindOne, works(list), works(explicit), works(hook("toolu_fifo_0"))}},
		{"manifest", manifestOf, []command{rewindOne, {args: []string{"diff", "ONE"}, code: 1}}},
		{"checkpoint", func(_ *testing.T, _, one string) string { return filepath.Join("checkpoints", one) }, []command{list}},
		{"index", fixed("index"), []command{checkpoint}},
		{"position", fixed("position"), []command{list, checkpoint, explicit}},
		{"journal", fixed("journal"), []command{list, checkpoint, rewindOne, explicit}},
		{"format", fixed("format"), []command{list, checkpoint, effects, explicit}},
		{"lock", fixed("lock"), []command{checkpoint}},
		{"ledger record", under("effects/keys"), []command{effects, spentKey}},
		{"ledger lock", fixed("effects/lock"), []command{explicit, hook("toolu_fifo_1")}},
		{"chain", fixed("chain.jsonl"), []command{verify, checkpoint, explicit}},
		{"chain sidecar", fixed("chain.tree"), []command{verify, checkpoint}},
		{"chain lock", fixed("chain.lock"), []command{checkpoint, explicit}},
		{"rules file", fixed("effects.json"), []command{hook("toolu_fifo_2")}},
		{"savings receipt", fixed("savings.json"), []command{{args: []string{"savings"}, code: 1}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws, one := fullStore(t)
			store := stateDir(t, ws)
			rel := c.file(t, store, one)
			if c.name == "object" {
				filepath.WalkDir(filepath.Join(store, "objects"), func(p string, d os.DirEntry, err error) error {
					if err == nil && d.Type().IsRegular() {
						mkfifo(t, p)
					}
					return nil
				})
				// Small contents are packed: their packs too.
				packs, _ := filepath.Glob(filepath.Join(store, "packs", "*.pack"))
				for _, p := range packs {
					mkfifo(t, p)
				}
			} else {
				mkfifo(t, filepath.Join(store, rel))
			}
			for _, cmd := range c.cmds {
				args := []string{"--workspace", ws}
				for _, a := range cmd.args {
					args = append(args, strings.ReplaceAll(a, "ONE", one))
				}
				r := runPromptly(t, ws, cmd.stdin, args...)
				saysFIFO(t, strings.Join(args[2:], " "), r, cmd.code, rel)
			}
		})
	}
}

// fixed returns a file function for a state file with a fixed name.
func fixed(rel string) func(*testing.T, string, string) string {
	return func(*testing.T, string, string) string { return filepath.FromSlash(rel) }
}

// under returns a file function for the first file under dir.
func under(dir string) func(*testing.T, string, string) string {
	return func(t *testing.T, store, _ string) string { return oneFile(t, store, filepath.FromSlash(dir)) }
}

// manifestOf is the file function for the manifest of checkpoint "one".
func manifestOf(t *testing.T, store, one string) string {
	var cp struct{ Manifest string }
	b, err := os.ReadFile(filepath.Join(store, "checkpoints", one))
	if err != nil || json.Unmarshal(b, &cp) != nil || cp.Manifest == "" {
		t.Fatalf("checkpoint %s: %v %s", one, err, b)
	}
	return filepath.Join("manifests", cp.Manifest)
}

// Inputs named on the command line: a FIFO fails at once, naming it (standard input, "-", is a
// stream by design and is read as one).
func TestInputFileFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "input.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	prev := filepath.Join(dir, "prev.json")
	if err := os.WriteFile(prev, []byte(`{"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": "hi"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, _ := fullStore(t)
	for _, args := range [][]string{
		{"cache-compare", prev, fifo},
		{"cache-compare", fifo, prev},
		{"cache-report", "@" + fifo},
		{"prune", "@" + fifo},
		{"analyze", "--file", fifo},
		{"--workspace", ws, "chain", "verify", "--file", fifo},
		{"--workspace", ws, "chain", "verify", "--head", fifo},
		{"--workspace", ws, "chain", "head", "--sign-key", fifo},
		{"gateway", "--config", fifo},
	} {
		r := runPromptly(t, dir, "", args...)
		saysFIFO(t, strings.Join(args, " "), r, 1, fifo)
	}
}

// Failure memory, read by the MCP server's backtrack tools: a FIFO there is a tool error naming
// it, and the server goes on serving.
func TestMemoryFIFO(t *testing.T) {
	ws, _ := fullStore(t)
	rel := "memory.jsonl"
	mkfifo(t, filepath.Join(stateDir(t, ws), rel))
	cs := startMCP(t, ws, mcpEnv())
	for range 2 {
		ctx, cancel := context.WithTimeout(t.Context(), promptly)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "backtrack_candidates", Arguments: map[string]any{}})
		cancel()
		if err != nil {
			t.Fatalf("backtrack_candidates: %v (hung?)", err)
		}
		if text := resultText(res); !res.IsError || !strings.Contains(text, rel) || !strings.Contains(text, "is a FIFO, not a regular file") {
			t.Fatalf("backtrack_candidates: error %v, %q: want a tool error naming %s as a FIFO", res.IsError, text, rel)
		}
	}
}

// Every form of the guard with a FIFO in place of the ledger record it must read: a decision
// refuses in the caller's protocol (exit 2; Cursor: exit 0 with "deny", as Cursor reads JSON),
// a report fails with exit 1, and none waits.
func TestGuardFormsLedgerFIFO(t *testing.T) {
	ws, _ := fullStore(t)
	if r := runPromptly(t, ws, pushHook(t, "toolu_a"), "--workspace", ws, "guard"); r.code != 0 {
		t.Fatalf("first push: %d %s", r.code, r.stderr)
	}
	// The push's record is the ledger's one "shell:" key.
	store := stateDir(t, ws)
	var rel string
	entries, _ := os.ReadDir(filepath.Join(store, "effects", "keys"))
	for _, e := range entries {
		name := filepath.Join("effects", "keys", e.Name())
		if b, _ := os.ReadFile(filepath.Join(store, name)); strings.Contains(string(b), `"shell:`) {
			rel = name
		}
	}
	if rel == "" {
		t.Fatal("no ledger record of the push")
	}
	mkfifo(t, filepath.Join(store, rel))
	cursor := `{"conversation_id": "c", "generation_id": "g", "hook_event_name": "beforeShellExecution", "command": "git push origin main", "cwd": "` + ws + `", "workspace_roots": ["` + ws + `"]}`
	post := hookInput(t, "PostToolUse", "Bash", map[string]any{"command": "git push origin main"}, "toolu_a", map[string]any{"tool_response": map[string]any{}})
	for _, c := range []struct {
		name, stdin string
		json        bool
		code        int
		out         func(r result) string // where the error must be
	}{
		{"PreToolUse", pushHook(t, "toolu_b"), false, guardRefuses, func(r result) string { return r.stderr }},
		{"PreToolUse --json", pushHook(t, "toolu_c"), true, guardRefuses, func(r result) string { return r.stdout }},
		{"Cursor", cursor, false, 0, func(r result) string {
			if !strings.Contains(r.stdout, `"permission":"deny"`) {
				return ""
			}
			return r.stdout
		}},
		{"PostToolUse", post, false, 1, func(r result) string { return r.stderr }},
	} {
		args := []string{"--workspace", ws, "guard"}
		if c.json {
			args = []string{"--workspace", ws, "--json", "guard"}
		}
		r := runPromptly(t, ws, c.stdin, args...)
		if out := c.out(r); r.code != c.code || !strings.Contains(out, rel) || !strings.Contains(out, "is a FIFO, not a regular file") {
			t.Errorf("%s: exit %d (want %d), the answer does not name %s as a FIFO:\nstdout %q\nstderr %q", c.name, r.code, c.code, rel, r.stdout, r.stderr)
		}
	}
}

// A state file is never reached through a symlink, even one to a valid copy of it: whatever is
// at the name must be the regular file this program wrote.
func TestStateFileSymlink(t *testing.T) {
	ws, _ := fullStore(t)
	store := stateDir(t, ws)
	copyOf := filepath.Join(t.TempDir(), "position")
	b, err := os.ReadFile(filepath.Join(store, "position"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(copyOf, b, 0o600); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(store, "position"))
	if err := os.Symlink(copyOf, filepath.Join(store, "position")); err != nil {
		t.Fatal(err)
	}
	r := runPromptly(t, ws, "", "--workspace", ws, "list")
	if r.code != 1 || !strings.Contains(r.stderr, "position is a symlink, not a regular file") {
		t.Fatalf("list with a symlinked position: exit %d\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
	}
}
