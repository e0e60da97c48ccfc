package agents

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// PayloadsVar names a folder to keep every hook payload the clients send in, one file per
// client, event and tool (<folder>/<client>/<event>-<tool>.json, the first of each kind), as
// they sent it: the fixtures of barrier/testdata/hooks are taken from there. Unset, the hooks
// run the binaries directly.
const PayloadsVar = "REWIND_AGENTS_PAYLOADS"

// CapturePayloads puts, when PayloadsVar is set, a recorder in front of agent-rewind-hook (and
// of `agent-rewind guard`) on PATH: a shell script that keeps its standard input and runs the
// real program on it. Call it before the client starts; SavePayloads keeps what it recorded.
func (e *Env) CapturePayloads() {
	if os.Getenv(PayloadsVar) == "" {
		return
	}
	dir := filepath.Join(e.Root, "payload-bin")
	rec := filepath.Join(e.Root, "payloads")
	if err := os.MkdirAll(rec, 0o700); err != nil {
		e.T.Fatal(err)
	}
	for _, prog := range []struct{ name, real, only string }{
		{"agent-rewind-hook", e.Bin.Hook, ""},
		// agent-rewind is also the MCP server, whose standard input is the protocol: only a
		// guard's is a payload.
		{"agent-rewind", e.Bin.Rewind, "guard"},
	} {
		script := fmt.Sprintf(`#!/bin/sh
# agents.CapturePayloads: keeps the hook's input, then runs %[1]s on it.
capture=%[3]q
if [ -n "$capture" ]; then
  capture=
  for a in "$@"; do [ "$a" = %[3]q ] && capture=1; done
  [ -n "$capture" ] || exec %[2]q "$@"
fi
f=$(mktemp %[4]q/payload.XXXXXX) || exit 1
cat >"$f"
printf '%%s\n' "$@" >"$f.args"
exec %[2]q "$@" <"$f"
`, prog.name, prog.real, prog.only, rec)
		e.WriteFile(filepath.Join(dir, prog.name), script)
		if err := os.Chmod(filepath.Join(dir, prog.name), 0o755); err != nil {
			e.T.Fatal(err)
		}
	}
	e.vars["PATH"] = dir + string(os.PathListSeparator) + e.vars["PATH"]
}

// SavePayloads copies the payloads CapturePayloads recorded to PayloadsVar's folder under
// client, named by event and tool, keeping the first of each kind there, and returns the
// names of the files it wrote.
func (e *Env) SavePayloads(client string) []string {
	out := os.Getenv(PayloadsVar)
	if out == "" {
		return nil
	}
	files, _ := filepath.Glob(filepath.Join(e.Root, "payloads", "payload.*"))
	// In the order the hooks ran (the names are random).
	mtime := map[string]int64{}
	for _, f := range files {
		if info, err := os.Stat(f); err == nil {
			mtime[f] = info.ModTime().UnixNano()
		}
	}
	slices.SortFunc(files, func(a, b string) int { return cmp.Compare(mtime[a], mtime[b]) })
	var wrote []string
	for _, f := range files {
		if strings.HasSuffix(f, ".args") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			e.T.Errorf("payload %s: %v", f, err)
			continue
		}
		name := PayloadName(b)
		dst := filepath.Join(out, client, name)
		if fileExists(dst) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			e.T.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			e.T.Fatal(err)
		}
		wrote = append(wrote, dst)
	}
	return wrote
}

// PayloadName names a hook payload by its event and tool, and a shell call also by its program
// and subcommand, lower case ("pretooluse-bash-git-push.json", "pretooluse-mcp__shop__send_email.json"), from the
// members the clients name them by; a payload that is not JSON is "unreadable.json".
func PayloadName(payload []byte) string {
	var p map[string]any
	if json.Unmarshal(payload, &p) != nil {
		return "unreadable.json"
	}
	str := func(m map[string]any, keys ...string) string {
		for _, k := range keys {
			if s, ok := m[k].(string); ok && s != "" {
				return s
			}
		}
		return ""
	}
	event := str(p, "hook_event_name", "hookEventName", "hookName", "agent_action_name")
	tool := str(p, "tool_name", "toolName")
	for _, nested := range []string{"tool_call", "preToolUse", "postToolUse", "tool_info"} {
		if m, ok := p[nested].(map[string]any); ok && tool == "" {
			tool = str(m, "name", "toolName", "tool_name", "mcp_tool_name")
		}
	}
	// A shell call's kind is also the program it runs and its subcommand (git-push, printf).
	program := ""
	for _, args := range []string{"tool_input", "toolArgs"} {
		if m, ok := p[args].(map[string]any); ok {
			if f := strings.Fields(str(m, "command")); len(f) > 0 {
				program = filepath.Base(f[0])
				if len(f) > 1 && subcommand.MatchString(f[1]) { // git push, npm publish
					program += "-" + f[1]
				}
			}
		}
	}
	name := strings.Trim(strings.Join([]string{event, tool, program}, "-"), "-")
	if name == "" {
		name = "unnamed"
	}
	return strings.ToLower(unsafeName.ReplaceAllString(name, "_")) + ".json"
}

var (
	unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)
	subcommand = regexp.MustCompile(`^[a-z][a-z-]*$`)
)
