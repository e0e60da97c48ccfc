package agentconfig

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Codex runs a hook only once it is trusted: ~/.codex/config.toml holds, per hook, the hash
// of the hook as trusted ([hooks.state."<hooks file>:<event>:<group>:<hook>"] trusted_hash),
// and skips any hook whose current hash is not there, silently. Codex's app-server (JSON-RPC
// on stdio: initialize, initialized, then hooks/list) reports every hook it finds for a folder
// with its key, its current hash and its trust status; measured with Codex CLI 0.169.0
// (tools/agents, TestCodexOneStore), which then runs trusted hooks in codex exec too. Setup
// --trust-hooks writes the entries for agent-rewind's own hooks only; doctor reads the status.

// CodexHook is one hook as codex app-server's hooks/list reports it.
type CodexHook struct {
	Key         string `json:"key"`
	EventName   string `json:"eventName"`
	Command     string `json:"command"`
	Matcher     string `json:"matcher"`
	CurrentHash string `json:"currentHash"`
	TrustStatus string `json:"trustStatus"` // untrusted, trusted, modified, ...
}

// codexTimeout bounds one exchange with codex app-server.
const codexTimeout = 30 * time.Second

// CodexHooks asks codex (its executable) which hooks it finds for dir.
func CodexHooks(codex, dir string) ([]CodexHook, error) {
	ctx, cancel := context.WithTimeout(context.Background(), codexTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, codex, "app-server")
	cmd.Dir = dir
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var errb strings.Builder
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s app-server: %w", codex, err)
	}
	defer func() { in.Close(); cmd.Process.Kill(); cmd.Wait() }()
	dec := json.NewDecoder(bufio.NewReader(out))
	call := func(id int, method string, params any) (json.RawMessage, error) {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		if _, err := in.Write(append(b, '\n')); err != nil {
			return nil, fmt.Errorf("codex app-server %s: %w", method, err)
		}
		for {
			var msg struct {
				ID     *int            `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if err := dec.Decode(&msg); err != nil {
				if ctx.Err() != nil {
					err = fmt.Errorf("no answer within %v", codexTimeout)
				}
				return nil, fmt.Errorf("codex app-server %s: %v; its stderr: %s", method, err, strings.TrimSpace(tailOf(errb.String(), 500)))
			}
			if msg.ID != nil && *msg.ID == id {
				if msg.Error != nil {
					return nil, fmt.Errorf("codex app-server %s: %s", method, msg.Error)
				}
				return msg.Result, nil
			}
		}
	}
	if _, err := call(1, "initialize", map[string]any{"clientInfo": map[string]string{"name": "agent-rewind", "version": "1"}}); err != nil {
		return nil, err
	}
	b, _ := json.Marshal(map[string]string{"jsonrpc": "2.0", "method": "initialized"})
	io.WriteString(in, string(b)+"\n")
	res, err := call(2, "hooks/list", map[string]any{"cwds": []string{dir}})
	if err != nil {
		return nil, err
	}
	var list struct {
		Data []struct {
			Hooks  []CodexHook      `json:"hooks"`
			Errors []map[string]any `json:"errors"`
		} `json:"data"`
	}
	if err := json.Unmarshal(res, &list); err != nil {
		return nil, fmt.Errorf("codex app-server hooks/list: an answer setup cannot read: %w", err)
	}
	var hooks []CodexHook
	for _, d := range list.Data {
		if len(d.Errors) > 0 {
			return nil, fmt.Errorf("codex app-server hooks/list reports errors in the hook files: %v", d.Errors)
		}
		hooks = append(hooks, d.Hooks...)
	}
	return hooks, nil
}

func tailOf(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// CodexHooksFile is the hooks file of Codex for a scope.
func CodexHooksFile(scope Scope, l Locations) string {
	if scope == ScopeUser {
		return filepath.Join(l.codexHome(), "hooks.json")
	}
	return filepath.Join(l.Root, ".codex", "hooks.json")
}

// CodexConfig is Codex's user configuration, where trust is kept.
func CodexConfig(l Locations) string { return filepath.Join(l.codexHome(), "config.toml") }

// ours reports whether a hook Codex lists is one of agent-rewind's in hooksFile: its key names
// that file, and it runs the guard.
func (h CodexHook) ours(hooksFile string) bool {
	return strings.HasPrefix(h.Key, hooksFile+":") && RunsGuard(h.Command)
}

// TrustCodexHooks trusts agent-rewind's hooks of the scope's hooks file, as /hooks does: a
// [hooks.state."KEY"] trusted_hash table per untrusted hook, appended to Codex's config.toml
// and recorded, then checked with hooks/list again.
func TrustCodexHooks(req Request, codex string) (FileChange, error) {
	hooksFile := CodexHooksFile(req.Scope, req.Loc)
	hooks, err := CodexHooks(codex, req.Loc.Root)
	if err != nil {
		return FileChange{}, err
	}
	var untrusted []CodexHook
	for _, h := range hooks {
		if h.ours(hooksFile) && h.TrustStatus != "trusted" {
			untrusted = append(untrusted, h)
		}
	}
	p, err := planTrust(req, hooksFile, untrusted)
	if err != nil {
		return FileChange{}, err
	}
	if req.DryRun || p.change.Action == ActionUnchanged {
		return p.change, nil
	}
	if err := p.apply(false); err != nil {
		return p.change, err
	}
	after, err := CodexHooks(codex, req.Loc.Root)
	if err != nil {
		return p.change, err
	}
	for _, h := range after {
		if h.ours(hooksFile) && h.TrustStatus != "trusted" {
			return p.change, fmt.Errorf("codex still reports the hook %s as %s after its trusted_hash was written to %s", h.Key, h.TrustStatus, p.change.Path)
		}
	}
	return p.change, nil
}

// planTrust plans the trust entries of hooks (agent-rewind's, untrusted) in Codex's config.toml;
// with none, it plans taking out the entries setup wrote for hooksFile (--remove).
func planTrust(req Request, hooksFile string, hooks []CodexHook) (*planned, error) {
	file := CodexConfig(req.Loc)
	target, b, exists, mode, err := readTarget(file, 0o600)
	if err != nil {
		return nil, refusal(file, req.Client.Name, err)
	}
	orig := string(b)
	if _, err := parseTOML(orig); err != nil {
		return nil, refusal(file, req.Client.Name, err)
	}
	recs := records(req.Records)
	rec, err := recs.load(file)
	if err != nil {
		return nil, err
	}
	p := &planned{file: target, mode: mode, recs: recs, made: rec.Dirs, change: FileChange{Path: file, What: "hook trust", Changes: []Change{}}}
	text := orig
	next := &Record{File: file, Created: rec.Created, Dirs: rec.Dirs, Clients: addName(rec.Clients, req.Client.Name)}
	for _, blk := range rec.Blocks {
		if blk.Kind != "trust" || blk.For != hooksFile || (!req.Remove && !staleTrust(blk, hooks)) {
			next.Blocks = append(next.Blocks, blk)
			continue
		}
		t, ok := removeBlock(text, blk.Text)
		if !ok {
			p.change.Kept = append(p.change.Kept, Kept{At: firstHeader(blk.Text), Why: "changed since setup added it: left as it is"})
			continue
		}
		text = t
		p.change.Changes = append(p.change.Changes, Change{Op: "remove", At: firstHeader(blk.Text), Value: blk.Text})
	}
	doc, err := parseTOML(text)
	if err != nil {
		return nil, refusal(file, req.Client.Name, err)
	}
	for _, h := range hooks {
		if req.Remove {
			break
		}
		keys := []string{"hooks", "state", h.Key}
		why, existing := canAppend(doc, keys)
		switch {
		case existing != nil:
			p.change.Kept = append(p.change.Kept, Kept{At: "[" + dottedTOML(keys) + "]", Why: "a trust entry setup did not write (an earlier /hooks?): trust the hook with /hooks in a Codex session"})
			continue
		case why != "":
			return nil, refusal(file, req.Client.Name, fmt.Errorf("setup cannot add [%s]: %s", dottedTOML(keys), why))
		}
		t := tomlTable{keys: keys, members: []tomlMember{{"trusted_hash", tomlString(h.CurrentHash)}},
			comment: "agent-rewind's " + h.EventName + " hook, trusted by agent-rewind setup " + req.Client.Name + " --trust-hooks"}
		block := t.text()
		text = appendBlock(text, block)
		if doc, err = parseTOML(text); err != nil {
			return nil, refusal(file, req.Client.Name, fmt.Errorf("appending [%s] would not give valid TOML (%v)", dottedTOML(keys), err))
		}
		next.Blocks = append(next.Blocks, Block{Kind: "trust", For: hooksFile, Text: block})
		p.change.Changes = append(p.change.Changes, Change{Op: "add", At: firstHeader(block), Value: block})
	}
	switch {
	case text == orig:
		p.change.Action = ActionUnchanged
	case !exists:
		p.change.Action = ActionCreate
		p.dirs = missingDirs(filepath.Dir(target))
		next.Created, next.Dirs = true, p.dirs
	case req.Remove && rec.Created && isEmptyConfig(formatTOML, []byte(text)):
		p.change.Action, p.del = ActionDelete, true
	default:
		p.change.Action = ActionChange
	}
	p.data = []byte(text)
	if next.empty() {
		next = &Record{File: file}
	}
	if !sameRecord(rec, next) {
		p.rec = next
	}
	return p, nil
}

// staleTrust reports whether a trust block setup wrote is for a hook that is untrusted now (its
// hash changed with the hook): it is replaced.
func staleTrust(b Block, hooks []CodexHook) bool {
	for _, h := range hooks {
		if strings.Contains(b.Text, tomlString(h.Key)) {
			return true
		}
	}
	return false
}

// UntrustCodexHooks plans (and unless DryRun applies) taking out the trust entries setup wrote
// for the scope's hooks file: part of --remove.
func UntrustCodexHooks(req Request) (FileChange, error) {
	p, err := planTrust(req, CodexHooksFile(req.Scope, req.Loc), nil)
	if err != nil {
		return FileChange{}, err
	}
	if req.DryRun || p.change.Action == ActionUnchanged {
		return p.change, nil
	}
	return p.change, p.apply(true)
}
