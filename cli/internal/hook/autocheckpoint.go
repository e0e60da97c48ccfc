package hook

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/agent-rewind/rewind/barrier"
	"github.com/agent-rewind/rewind/cli/internal/watch"
	"github.com/agent-rewind/rewind/cli/internal/workspace"
	"github.com/agent-rewind/rewind/internal/detach"
	"github.com/agent-rewind/rewind/internal/lockfile"
	"github.com/agent-rewind/rewind/internal/regular"
	"github.com/agent-rewind/rewind/mcpserver"
	"github.com/agent-rewind/rewind/snapshot"
)

// Automatic checkpoints (docs/agents.md): the guard, run by an agent's hook before a tool call,
// also checkpoints the workspace before a call that can change files, in the same process. It
// never blocks nor fails the call: whatever goes wrong is a note on stderr, and the guard's
// answer is the barrier's alone.

// AutoLimitEnv names the setting for the size limit of a workspace's first automatic
// checkpoint: a size ("2GiB", "500MB", "0" for no limit) or "off" (no automatic checkpoints).
const AutoLimitEnv = "REWIND_AUTO_CHECKPOINT_LIMIT"

// defaultAutoLimit is the size above which a workspace's first checkpoint is not taken
// automatically.
const defaultAutoLimit = 2 << 30

// autoLockWait bounds how long an automatic checkpoint waits for the store's lock (a rewind, a
// gc or another checkpoint holds it) before it gives up, so the tool call is not held up.
const autoLockWait = 2 * time.Second

// autoCall returns the tool call an automatic checkpoint is taken before; ok is false when the
// input is not one: not a client's "before a tool call" event, no tool call id to name it by
// (the clients whose facts name no CallID and that agent-rewind cannot name either: Windsurf,
// Copilot, Cline's extension; Cursor's beforeShellExecution sends none either), a tool that
// cannot change files (Read, Grep, ...: barrier.Input.ChangesFiles), or one of agent-rewind's
// own MCP tools, which checkpoint by themselves. Gemini CLI's calls are named by agent-rewind
// (barrier.Client.NamesCalls).
func autoCall(in barrier.Input) (call snapshot.ToolCall, ok bool) {
	c := in.Client()
	switch {
	case c == nil || !c.Checkpoints() || in.ToolName == "":
		return call, false
	case !in.Deciding() || !in.ChangesFiles() || ownTool(in):
		return call, false
	}
	id := in.ToolUseID
	if c.CallID == "" {
		id = c.NameCall()
	}
	if id == "" {
		return call, false
	}
	summary := ""
	switch script, argv, shell := in.ShellCommand(); {
	case in.MCPTool:
	case shell && argv != nil:
		summary = strings.Join(argv, " ")
	case shell:
		summary = script
	default:
		summary = toolPath(in.ToolInput)
	}
	return snapshot.ToolCall{ID: id, Tool: in.ToolName, Summary: summary, Session: in.SessionID, Agent: string(in.Agent)}, true
}

// ownTool reports whether the call is one of agent-rewind's MCP tools: a tool the MCP server
// serves, of the server configured under its name, as the client spells it.
func ownTool(in barrier.Input) bool {
	return in.FromServer(mcpserver.ServerName) && mcpserver.ProfileAll.Has(in.MCPToolName())
}

// toolPath is the file an editing tool names (file_path, notebook_path, path), or the first
// line of a patch (apply_patch's command for Codex, input for Cline) that names one.
func toolPath(input json.RawMessage) string {
	var ti struct {
		FilePath     string `json:"file_path"`
		NotebookPath string `json:"notebook_path"`
		Path         string `json:"path"`
		FilePathVS   string `json:"filePath"`
		Command      string `json:"command"`
		Patch        string `json:"input"`
	}
	if json.Unmarshal(input, &ti) != nil {
		return ""
	}
	for _, p := range []string{ti.FilePath, ti.NotebookPath, ti.Path, ti.FilePathVS} {
		if p != "" {
			return p
		}
	}
	for line := range strings.Lines(ti.Command + "\n" + ti.Patch) {
		for _, verb := range []string{"*** Update File: ", "*** Add File: ", "*** Delete File: "} {
			if p, ok := strings.CutPrefix(line, verb); ok {
				return strings.TrimSpace(p)
			}
		}
	}
	return ""
}

// autoNote is what an automatic checkpoint has to say ("" when all went well).
type autoNote struct {
	text string
	show bool // shown to the person too (Claude Code's systemMessage): the notes said once
}

// backgroundBytes is the size from which a workspace's first checkpoint is taken by a process
// of its own rather than in the hook: reading that much could outlast the hook's timeout, and
// a hook that times out blocks the call.
const backgroundBytes = 64 << 20

// autoCheckpoint takes the automatic checkpoint before call in the guard's workspace. A
// workspace the rules refused (werr: the home folder, "/") and a first checkpoint larger than
// the limit are not checkpointed, and said so once per workspace and reason; a large first
// checkpoint is started in the background.
func (g *guardRun) autoCheckpoint(call snapshot.ToolCall, werr error) autoNote {
	shown := func(text string) autoNote { return autoNote{text: text, show: text != ""} }
	skipped := func(err error) autoNote {
		return autoNote{text: "agent-rewind: no automatic checkpoint before " + call.ID + ": " + err.Error()}
	}
	limit, off, lerr := autoLimit()
	switch {
	case lerr != nil:
		return shown(once(lerr.Error(), "agent-rewind: no automatic checkpoints: "+lerr.Error()))
	case off:
		return autoNote{}
	case werr != nil:
		return shown(once("workspace "+werr.Error(), "agent-rewind: no automatic checkpoints: "+werr.Error()))
	}
	// first decides about a workspace's first checkpoint: done is true when none is taken here.
	first := func() (note autoNote, done bool) {
		bound := limit
		if limit == 0 {
			bound = backgroundBytes
		}
		size, over := treeSizeOver(g.root, bound)
		switch {
		case limit > 0 && over:
			return shown(once(fmt.Sprintf("limit %s %d", g.root, limit), fmt.Sprintf(
				"agent-rewind: no automatic checkpoints in %s: its first checkpoint would store more than %s (%s seen so far). "+
					"To opt in, exclude what need not be kept in %s, raise %s, or take the first checkpoint yourself: agent-rewind checkpoint",
				g.root, ByteSize(limit), ByteSize(size), filepath.Join(g.root, snapshot.IgnoreFile), AutoLimitEnv))), true
		case size >= backgroundBytes:
			if err := startFirstCheckpoint(g.root); err != nil {
				return skipped(fmt.Errorf("start the first checkpoint: %w", err)), true
			}
			return shown(once("background "+g.root, fmt.Sprintf(
				"agent-rewind: taking the first checkpoint of %s (at least %s) in the background; automatic checkpoints before tool calls start when it is done",
				g.root, ByteSize(size)))), true
		}
		return autoNote{}, false
	}
	ws, err := g.workspace(false)
	if err != nil {
		return skipped(err)
	}
	if ws == nil {
		if note, done := first(); done {
			return note
		}
		if ws, err = g.workspace(true); err != nil {
			return skipped(err)
		}
	}
	// Opened with a lock that gives up rather than hold the call (opening finishes an
	// interrupted rewind, under the lock).
	s, err := snapshot.Open(ws.Root, snapshot.Options{StateDir: ws.Meta, Recorder: ws, Lock: tryLock(ws.Path("lock"), autoLockWait), SyncLater: g.syncLater})
	if err != nil {
		return skipped(err)
	}
	cur, err := s.Current()
	if err != nil {
		return skipped(err)
	}
	if cur == "" {
		// A first checkpoint in the background holds the lock: a large workspace's is not
		// waited for, nor is another started; a small one's (a prompt's warm-up, Warm) ends
		// soon, and this call's checkpoint then reuses it.
		unlock, err := tryLock(ws.Path("lock"), 0)()
		if err != nil {
			if _, big := treeSizeOver(g.root, backgroundBytes); big {
				return skipped(err)
			}
			if unlock, err = tryLock(ws.Path("lock"), autoLockWait)(); err != nil {
				return skipped(err)
			}
		}
		unlock()
		if cur, err = s.Current(); err != nil {
			return skipped(err)
		}
	}
	if cur == "" {
		if note, done := first(); done {
			return note
		}
	}
	if c := barrier.ClientOf(barrier.Agent(call.Agent)); c != nil && c.IsFileTool(call.Tool) && filepath.IsAbs(call.Summary) {
		if rel, err := filepath.Rel(g.root, call.Summary); err == nil && filepath.IsLocal(rel) {
			call.Summary = rel // "Edit: src/main.go": the workspace is known
		}
	}
	res, err := watch.AutoCheckpoint(context.Background(), s, g.root, ws.Meta, cur, call, !g.noWatcherStart)
	if err != nil {
		return skipped(err)
	}
	if res.Reused {
		return autoNote{} // nothing written: nothing new to maintain
	}
	return g.maintainIfDue(s, ws.Root)
}

// startFirstCheckpoint starts "agent-rewind --workspace root checkpoint" (watch.Program) in a session of its
// own, and does not wait for it: it outlives the hook.
func startFirstCheckpoint(root string) error {
	return startDetached(root, "checkpoint", "first automatic checkpoint")
}

// startDetached starts "agent-rewind --workspace root args..." (watch.Program) in a session of
// its own, and does not wait for it: it outlives the hook.
func startDetached(root string, args ...string) error {
	exe, err := watch.Program()
	if err != nil {
		return err
	}
	cmd := exec.Command(exe, append([]string{"--workspace", root}, args...)...)
	cmd.Dir = root
	detach.Set(cmd) // stdin, stdout and stderr: the null device
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}

// autoLimit reads AutoLimitEnv: the first checkpoint's size limit (0: none), or off.
func autoLimit() (limit int64, off bool, err error) {
	v := strings.TrimSpace(os.Getenv(AutoLimitEnv))
	switch strings.ToLower(v) {
	case "":
		return defaultAutoLimit, false, nil
	case "off":
		return 0, true, nil
	}
	n, err := ParseSize(v)
	if err != nil {
		return 0, false, fmt.Errorf("%s=%q: %v (give a size such as 2GiB or 500MB, 0 for no limit, or off)", AutoLimitEnv, v, err)
	}
	return n, false, nil
}

// treeSizeOver adds up the sizes of the regular files a checkpoint of root would capture (the
// root's .rewindignore obeyed), and stops as soon as the sum exceeds limit.
func treeSizeOver(root string, limit int64) (size int64, over bool) {
	var ign *snapshot.Ignore
	if b, err := regular.ReadFile(filepath.Join(root, snapshot.IgnoreFile)); err == nil {
		ign = snapshot.ParseIgnore(b)
	}
	errOver := errors.New("over")
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == root {
			return nil
		}
		rel := filepath.ToSlash(path[len(root)+1:])
		if ign.Match(rel, d.IsDir()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				size += info.Size()
			}
			if size > limit {
				return errOver
			}
		}
		return nil
	})
	return size, size > limit
}

// once returns note the first time it is called with key (per user, in the state base), and ""
// after: the hook says why there are no automatic checkpoints once, not at every tool call.
func once(key, note string) string {
	base, err := workspace.TrustedStateBase()
	if err != nil {
		return note
	}
	sum := sha256.Sum256([]byte(key))
	dir := filepath.Join(base, "notices")
	name := filepath.Join(dir, hex.EncodeToString(sum[:8]))
	if _, err := os.Lstat(name); err == nil {
		return ""
	}
	if os.MkdirAll(dir, 0o700) == nil {
		os.WriteFile(name, []byte(note+"\n"), 0o600) // a lost marker only repeats the note
	}
	return note
}

// tryLock is a snapshot lock that waits at most wait for the flock on name, then gives up.
func tryLock(name string, wait time.Duration) func() (func() error, error) {
	return func() (func() error, error) {
		f, err := regular.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("open lock %s: %w", name, err)
		}
		deadline := time.Now().Add(wait)
		for {
			err := lockfile.Lock(f, lockfile.Exclusive|lockfile.NonBlocking)
			if err == nil {
				return f.Close, nil
			}
			if err != syscall.EWOULDBLOCK && err != syscall.EINTR {
				f.Close()
				return nil, fmt.Errorf("lock %s: %w", name, err)
			}
			if time.Now().After(deadline) {
				f.Close()
				return nil, fmt.Errorf("the store is busy (a rewind, gc or checkpoint holds %s; waited %s): this tool call has no checkpoint of its own", name, wait)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// writeAutoNote writes note on stderr, and a note said once also, for clients that show a
// hook's systemMessage (Claude Code, whose hooks' stderr is hidden unless the call fails), as
// that, when the answer has no stdout of its own.
func writeAutoNote(stdout, stderr io.Writer, asJSON bool, in barrier.Input, answerStdout string, note autoNote) {
	if note.text == "" {
		return
	}
	fmt.Fprintln(stderr, note.text)
	if c := in.Client(); note.show && c != nil && c.SystemMessage && answerStdout == "" && !asJSON {
		b, _ := json.Marshal(map[string]string{"systemMessage": note.text})
		fmt.Fprintln(stdout, string(b))
	}
}
