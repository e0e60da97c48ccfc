package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/barrier"
	"github.com/agent-rewind/rewind/cli/internal/workspace"
	"github.com/agent-rewind/rewind/internal/lockfile"
)

// End-to-end tests of "agent-rewind guard", "release" and "effects": every guard is its own
// process of the real binary, as agents' hooks run it.

// guard runs "agent-rewind --workspace root guard [args]" with stdin, from another folder (hooks
// do not promise the working directory; --workspace names the workspace).
func guard(t *testing.T, root, stdin string, args ...string) result {
	t.Helper()
	return run(t, t.TempDir(), stdin, append([]string{"--workspace", root, "guard"}, args...)...)
}

// hookInput returns a Claude Code hook input (Codex when turnID is set) for a tool call.
func hookInput(t *testing.T, event, tool string, toolInput any, toolUseID string, extra map[string]any) string {
	t.Helper()
	m := map[string]any{
		"session_id": "e2e-session", "transcript_path": "/tmp/e2e/transcript.jsonl", "cwd": "/tmp/e2e",
		"permission_mode": "default", "hook_event_name": event, "tool_name": tool, "tool_input": toolInput,
		"tool_use_id": toolUseID,
	}
	for k, v := range extra {
		m[k] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// bashHook is hookInput for Claude Code's Bash tool.
func bashHook(t *testing.T, event, command, toolUseID string) string {
	return hookInput(t, event, "Bash", map[string]any{"command": command, "description": "e2e"}, toolUseID, nil)
}

// verifyChain checks the workspace's chain with "agent-rewind chain verify".
func verifyChain(t *testing.T, root string) {
	t.Helper()
	r := run(t, root, "", "--workspace", root, "chain", "verify")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "ok: ") {
		t.Fatalf("chain verify: code %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// ledgerState returns key's state as "agent-rewind effects --json" lists it ("" when absent).
func ledgerRecord(t *testing.T, root, key string) *barrier.Record {
	t.Helper()
	r := run(t, root, "", "--workspace", root, "--json", "effects")
	if r.code != 0 {
		t.Fatalf("effects: %d %s %s", r.code, r.stdout, r.stderr)
	}
	var res struct {
		Ledger  string
		Effects []*barrier.Record
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("effects --json: %v\n%s", err, r.stdout)
	}
	for _, rec := range res.Effects {
		if rec.Key == key {
			return rec
		}
	}
	return nil
}

// onlyKey returns the one key in the ledger.
func onlyKey(t *testing.T, root string) string {
	t.Helper()
	r := run(t, root, "", "--workspace", root, "--json", "effects")
	var res struct{ Effects []*barrier.Record }
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || len(res.Effects) != 1 {
		t.Fatalf("effects --json: want one key: %v\n%s", err, r.stdout)
	}
	return res.Effects[0].Key
}

func decision(t *testing.T, r result) barrier.Decision {
	t.Helper()
	var d barrier.Decision
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		t.Fatalf("guard --json: %v\nstdout %q\nstderr %q", err, r.stdout, r.stderr)
	}
	return d
}

func noStore(t *testing.T, root string) {
	t.Helper()
	if hasStore(t, root) {
		t.Fatalf("%s has a store: this path must not create one", root)
	}
	if ents, err := os.ReadDir(root); err != nil || len(ents) != 0 {
		t.Fatalf("%s: %d entries (%v): this path must not write in the workspace", root, len(ents), err)
	}
}

// Sixteen guard processes race on one new key: exactly one is admitted, fifteen are refused,
// and all sixteen decisions are on a chain that verifies.
func TestGuardConcurrentOneKey(t *testing.T) {
	const n = 16
	cases := []struct {
		name, refusal, effectState string
		input                      func(i int) string
	}{
		{"explicit", "it already fired", "spent", func(int) string {
			return `{"key": "charge-invoice-77", "payload": {"amount": 4900, "currency": "usd"}, "description": "charge invoice 77"}`
		}},
		{"claude-code-hook", "its outcome is unknown", "pending", func(i int) string {
			return bashHook(t, "PreToolUse", "git push origin main", "toolu_race_"+string(rune('a'+i)))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			cmds := make([]*exec.Cmd, n)
			outs := make([]*bytes.Buffer, n)
			errs := make([]*bytes.Buffer, n)
			for i := range cmds {
				cmds[i] = exec.Command(bin, "--workspace", root, "guard")
				cmds[i].Stdin = strings.NewReader(c.input(i))
				outs[i], errs[i] = &bytes.Buffer{}, &bytes.Buffer{}
				cmds[i].Stdout, cmds[i].Stderr = outs[i], errs[i]
			}
			var wg sync.WaitGroup
			codes := make([]int, n)
			for i, cmd := range cmds {
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				wg.Go(func() {
					err := cmd.Wait()
					var xe *exec.ExitError
					if err != nil && !errors.As(err, &xe) {
						t.Error(err)
					}
					codes[i] = cmd.ProcessState.ExitCode()
				})
			}
			wg.Wait()
			admitted, refused := 0, 0
			for i, code := range codes {
				switch code {
				case 0:
					admitted++
				case 2:
					refused++
					if outs[i].Len() > 0 || !strings.Contains(errs[i].String(), c.refusal) {
						t.Errorf("refused guard %d: stdout %q, stderr %q (want %q)", i, outs[i], errs[i], c.refusal)
					}
				default:
					t.Errorf("guard %d exited %d: %s", i, code, errs[i])
				}
			}
			if admitted != 1 || refused != n-1 {
				t.Fatalf("%d admitted, %d refused; want 1 and %d", admitted, refused, n-1)
			}
			got := kinds(readChain(t, root))
			if got["effect"] != 1 || got["refusal"] != n-1 || len(readChain(t, root)) != n {
				t.Fatalf("chain entries by kind: %v; want 1 effect and %d refusals", got, n-1)
			}
			if rec := ledgerRecord(t, root, onlyKey(t, root)); rec == nil || string(rec.State) != c.effectState || rec.Seq != readChain(t, root)[0].Seq {
				t.Fatalf("ledger record %+v", rec)
			}
			verifyChain(t, root)
		})
	}
}

// An effect admitted after a checkpoint stays spent when the workspace is rewound: the retry is
// refused with a reason naming the checkpoint that was current when it fired. Every step is a
// process of the real binary: checkpoint, guard, rewind, guard.
func TestGuardRefusedAfterRewind(t *testing.T) {
	root := t.TempDir()
	write := func(content string) {
		if err := os.WriteFile(filepath.Join(root, "release.txt"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	checkpoint := func(label string) string { // the real command, as a person or agent runs it
		t.Helper()
		var cp struct{ ID string }
		if err := json.Unmarshal([]byte(ok(t, root, "--json", "checkpoint", label).stdout), &cp); err != nil || cp.ID == "" {
			t.Fatalf("checkpoint --json: %v", err)
		}
		return cp.ID
	}
	var before, after string
	write("v1\n")
	before = checkpoint("before the release")
	write("v2\n")
	after = checkpoint("release prepared")

	// The agent pushes (PreToolUse admits it pending, PostToolUse confirms it), and an explicit
	// effect fires too.
	push := "git push origin v2"
	if r := guard(t, root, bashHook(t, "PreToolUse", push, "toolu_push_1")); r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Fatalf("first push: %+v", r)
	}
	if r := guard(t, root, bashHook(t, "PostToolUse", push, "toolu_push_1")); r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Fatalf("PostToolUse: %+v", r)
	}
	explicit := `{"key": "announce-v2", "payload": {"channel": "#releases"}, "description": "announce v2"}`
	d := decision(t, guard(t, root, explicit, "--json"))
	if !d.Admitted || d.Record == nil || d.Record.Checkpoint != after {
		t.Fatalf("explicit admission: %+v (want checkpoint %s)", d, after)
	}

	// Rewind to before the release: the workspace goes back, the ledger does not.
	ok(t, root, "rewind", before)
	if b, _ := os.ReadFile(filepath.Join(root, "release.txt")); string(b) != "v1\n" {
		t.Fatalf("rewind left release.txt = %q", b)
	}

	r := guard(t, root, bashHook(t, "PreToolUse", push, "toolu_push_2"))
	if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "it already fired") ||
		!strings.Contains(r.stderr, after) || !strings.Contains(r.stderr, "Rewinding the workspace does not undo external effects") {
		t.Fatalf("push retried after the rewind: code %d\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
	}
	r = guard(t, root, explicit)
	if r.code != 2 || !strings.Contains(r.stderr, "announce-v2") || !strings.Contains(r.stderr, "it already fired") {
		t.Fatalf("explicit effect retried after the rewind: %+v", r)
	}

	es := readChain(t, root)
	got := kinds(es)
	if got["checkpoint"] < 2 || got["rewind"] != 1 || got["effect"] != 2 || got["confirm"] != 1 || got["refusal"] != 2 {
		t.Fatalf("chain entries by kind: %v", got)
	}
	// The refusals come after the rewind on the chain, and cite the checkpoint current now.
	var last chainEntry
	for _, e := range es {
		if e.Kind == "refusal" {
			last = e
		}
	}
	var ref barrier.RefusalEntry
	if err := json.Unmarshal(last.Data, &ref); err != nil || ref.Code != barrier.CodeSpent || ref.Checkpoint != before {
		t.Fatalf("refusal entry %s: %v", last.Data, err)
	}
	verifyChain(t, root)
}

// The same key with another payload is refused as a mismatch; the same payload written another
// way is the same effect.
func TestGuardPayloadMismatch(t *testing.T) {
	root := t.TempDir()
	if d := decision(t, guard(t, root, `{"key": "refund-ch_1", "payload": {"charge": "ch_1", "amount": 1500}}`, "--json")); !d.Admitted || d.Code != barrier.CodeAdmitted || d.State != barrier.Spent {
		t.Fatalf("admission: %+v", d)
	}
	r := guard(t, root, `{"key": "refund-ch_1", "payload": {"charge": "ch_1", "amount": 2500}}`, "--json")
	if d := decision(t, r); r.code != 2 || d.Admitted || d.Code != barrier.CodePayloadMismatch || !strings.Contains(d.Reason, "different payload") {
		t.Fatalf("other payload: code %d, %+v", r.code, d)
	}
	r = guard(t, root, `{"payload": {"amount":1500,   "charge":"ch_1"}, "key": "refund-ch_1"}`)
	if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "it already fired") {
		t.Fatalf("same payload, other spelling: %+v", r)
	}
	if got := kinds(readChain(t, root)); got["effect"] != 1 || got["refusal"] != 2 {
		t.Fatalf("chain: %v", got)
	}
	verifyChain(t, root)
}

// A PreToolUse that is never followed by its PostToolUse (the agent crashed, the user denied it
// at the prompt) leaves the key pending: the next attempt is refused as outcome unknown until a
// person releases it.
func TestGuardPendingOutcomeUnknown(t *testing.T) {
	root := t.TempDir()
	cmd := "npm publish --access public"
	if r := guard(t, root, bashHook(t, "PreToolUse", cmd, "toolu_pub_1")); r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Fatalf("admission: %+v", r)
	}
	// The same tool call asked twice (two hooks on one call) is a duplicate, not a refusal.
	if r := guard(t, root, bashHook(t, "PreToolUse", cmd, "toolu_pub_1")); r.code != 0 {
		t.Fatalf("duplicate PreToolUse: %+v", r)
	}
	r := guard(t, root, bashHook(t, "PreToolUse", cmd, "toolu_pub_2"))
	if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "outcome is unknown") || !strings.Contains(r.stderr, "agent-rewind release") {
		t.Fatalf("retry while pending: %+v", r)
	}
	key := onlyKey(t, root)
	if rec := ledgerRecord(t, root, key); rec.State != barrier.Pending || rec.ToolUseID != "toolu_pub_1" {
		t.Fatalf("record: %+v", rec)
	}
	// A person reconciles and releases; the next attempt is a new generation.
	r = run(t, root, "", "release", key, "--reason", "denied at the prompt, never ran")
	if r.code != 0 || !strings.Contains(r.stdout, "released") || !strings.Contains(r.stdout, "pending -> released") {
		t.Fatalf("release: %+v", r)
	}
	if r := guard(t, root, bashHook(t, "PreToolUse", cmd, "toolu_pub_3")); r.code != 0 {
		t.Fatalf("after release: %+v", r)
	}
	if rec := ledgerRecord(t, root, key); rec.State != barrier.Pending || rec.Generation != 2 || rec.ToolUseID != "toolu_pub_3" {
		t.Fatalf("record after release: %+v", rec)
	}
	if got := kinds(readChain(t, root)); got["effect"] != 2 || got["refusal"] != 1 || got["release"] != 1 || len(readChain(t, root)) != 4 {
		t.Fatalf("chain: %v", got)
	}
	verifyChain(t, root)
}

// A guard killed (SIGKILL) after its admission is durable in the ledger but before it answered
// leaves the key pending: the next guard refuses it as outcome unknown. The test holds the
// chain's lock, so the guard stops right after linking its record, where it records on the
// chain; then it is killed.
func TestGuardKilledAfterPending(t *testing.T) {
	root := t.TempDir()
	ws, err := workspace.Init(root)
	if err != nil {
		t.Fatal(err)
	}
	ws.Close()
	lock, err := os.OpenFile(filepath.Join(stateDir(t, root), "chain.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := lockfile.Lock(lock, lockfile.Exclusive); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(bin, "--workspace", root, "guard")
	cmd.Stdin = strings.NewReader(bashHook(t, "PreToolUse", "kubectl -n prod apply -f deploy.yaml", "toolu_kill_1"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	keys := filepath.Join(stateDir(t, root), "effects", "keys")
	for linked := false; !linked; {
		select {
		case err := <-exited:
			t.Fatalf("the guard exited (%v) before its admission was linked: %s", err, out.String())
		case <-time.After(5 * time.Millisecond):
		}
		names, _ := filepath.Glob(filepath.Join(keys, "*.json"))
		linked = len(names) == 1
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-exited
	if cmd.ProcessState.Success() {
		t.Fatalf("the guard finished before it was killed: %s", out.String())
	}
	lock.Close() // the next guard records its refusal

	key := onlyKey(t, root)
	if rec := ledgerRecord(t, root, key); rec.State != barrier.Pending || rec.Seq != barrier.Unrecorded || rec.ToolUseID != "toolu_kill_1" {
		t.Fatalf("record left by the killed guard: %+v", rec)
	}
	r := guard(t, root, bashHook(t, "PreToolUse", "kubectl -n prod apply -f deploy.yaml", "toolu_kill_2"))
	if r.code != 2 || !strings.Contains(r.stderr, "outcome is unknown") {
		t.Fatalf("after the kill: %+v", r)
	}
	// The killed guard's admission was committed but never reached the chain: the next guard,
	// the next writer, records it late, before its own refusal.
	es := readChain(t, root)
	if got := kinds(es); got["effect"] != 1 || got["refusal"] != 1 || es[0].Kind != "effect" {
		t.Fatalf("chain: %v", got)
	}
	var d struct {
		ToolUseID string                 `json:"tool_use_id"`
		Late      *struct{ Time string } `json:"recorded_late"`
	}
	json.Unmarshal(es[0].Data, &d)
	if d.Late == nil || d.Late.Time == "" || d.ToolUseID != "toolu_kill_1" {
		t.Fatalf("the killed guard's admission is not recorded late: %+v", es[0])
	}
	verifyChain(t, root)
}

// PostToolUse confirms, PostToolUseFailure fails and PermissionDenied releases the effect that
// PreToolUse admitted for the same tool_use_id.
func TestGuardReportsByToolUseID(t *testing.T) {
	root := t.TempDir()
	step := func(input string, code int) {
		t.Helper()
		if r := guard(t, root, input); r.code != code || r.stdout != "" || (code == 0) != (r.stderr == "") {
			t.Fatalf("%s: code %d (want %d), stdout %q, stderr %q", input, r.code, code, r.stdout, r.stderr)
		}
	}
	state := func(command, toolUseID string) barrier.State {
		t.Helper()
		d := decision(t, run(t, root, "", "--workspace", root, "--json", "guard", bashHook(t, "PreToolUse", command, toolUseID)))
		return d.State
	}

	step(bashHook(t, "PreToolUse", "git push origin main", "toolu_a"), 0)
	step(bashHook(t, "PostToolUse", "git push origin main", "toolu_a"), 0)
	if s := state("git push origin main", "toolu_a2"); s != barrier.Spent {
		t.Fatalf("after PostToolUse: %s", s)
	}

	step(bashHook(t, "PreToolUse", "cargo publish", "toolu_b"), 0)
	step(hookInput(t, "PostToolUseFailure", "Bash", map[string]any{"command": "cargo publish"}, "toolu_b",
		map[string]any{"error": "error: 403 Forbidden", "is_interrupt": false}), 0)
	r := guard(t, root, bashHook(t, "PreToolUse", "cargo publish", "toolu_b2"))
	if r.code != 2 || !strings.Contains(r.stderr, "failed") || !strings.Contains(r.stderr, "403 Forbidden") {
		t.Fatalf("retry after a failure: %+v", r)
	}

	step(bashHook(t, "PreToolUse", "gh release create v1.0.0", "toolu_c"), 0)
	step(hookInput(t, "PermissionDenied", "Bash", map[string]any{"command": "gh release create v1.0.0"}, "toolu_c",
		map[string]any{"reason": "auto mode: releases need approval", "permission_mode": "auto"}), 0)
	step(bashHook(t, "PreToolUse", "gh release create v1.0.0", "toolu_c2"), 0) // released: admitted again

	// A report about a call that was never an effect changes nothing.
	before := len(readChain(t, root))
	step(bashHook(t, "PostToolUse", "ls", "toolu_never"), 0)
	if len(readChain(t, root)) != before {
		t.Fatal("a PostToolUse for an untracked call was recorded")
	}

	got := kinds(readChain(t, root))
	want := map[string]int{"effect": 4, "confirm": 1, "failure": 1, "release": 1, "refusal": 2}
	for k, n := range want {
		if got[k] != n {
			t.Fatalf("chain entries by kind: %v; want %v", got, want)
		}
	}
	verifyChain(t, root)
}

// fixtureCase is what one hook fixture of barrier/testdata/hooks does through the real binary.
type fixtureCase struct {
	file   string // under barrier/testdata/hooks
	before string // a fixture run first in the same workspace ("": none)
	want   expectation
	state  barrier.State // the ledger state of the one key afterwards ("": no store at all)
	repeat *expectation  // the same input again, with a new call id where it has one
	prompt string        // a prompt event: the text list then shows, redacted (the store holds the prompt log alone)
}

type expectation struct {
	code   int
	stdout string // a regular expression the whole stdout matches
	stderr string // a substring of stderr; "" means stderr is empty
}

var fixtureCases = []fixtureCase{
	{file: "claude-code/pretooluse-bash-ls.json", want: expectation{0, "", ""}},
	{file: "claude-code/pretooluse-bash-git-push.json", want: expectation{0, "", ""}, state: barrier.Pending,
		repeat: &expectation{2, "", "outcome is unknown"}},
	{file: "claude-code/pretooluse-mcp-slack.json", want: expectation{0, "", ""}, state: barrier.Pending,
		repeat: &expectation{2, "", "outcome is unknown"}},
	{file: "claude-code/posttooluse-bash.json", want: expectation{0, "", ""}},
	{file: "claude-code/posttooluse-bash.json", before: "claude-code/pretooluse-bash-git-push.json", want: expectation{0, "", ""}, state: barrier.Spent},
	{file: "claude-code/posttoolusefailure-bash.json", want: expectation{0, "", ""}},
	{file: "claude-code/posttoolusefailure-bash.json", before: "claude-code/pretooluse-bash-git-push.json", want: expectation{0, "", ""}, state: barrier.Failed},
	{file: "claude-code/permissiondenied-bash.json", want: expectation{0, "", ""}},
	{file: "claude-code/permissiondenied-bash.json", before: "claude-code/pretooluse-bash-git-push.json", want: expectation{0, "", ""}, state: barrier.Released},
	{file: "claude-code/sessionstart.json", want: expectation{0, "", ""}},
	{file: "codex/pretooluse-bash-npm-publish.json", want: expectation{0, "", ""}, state: barrier.Pending,
		repeat: &expectation{2, "", "outcome is unknown"}},
	{file: "codex/pretooluse-mcp.json", want: expectation{0, "", ""}, state: barrier.Pending,
		repeat: &expectation{2, "", "outcome is unknown"}},
	{file: "codex/pretooluse-apply-patch.json", want: expectation{0, "", ""}},
	{file: "codex/posttooluse-bash.json", want: expectation{0, "", ""}},
	{file: "codex/posttooluse-bash.json", before: "codex/pretooluse-bash-npm-publish.json", want: expectation{0, "", ""}, state: barrier.Spent},
	// Captured from the real clients by the harness (tools/agents; SOURCES.md).
	{file: "codex/real-0.169.0-pretooluse-mcp-shop-send-email.json", want: expectation{0, "", ""}, state: barrier.Pending,
		repeat: &expectation{2, "", "outcome is unknown"}},
	{file: "codex/real-0.169.0-posttooluse-mcp-shop-send-email.json", before: "codex/real-0.169.0-pretooluse-mcp-shop-send-email.json", want: expectation{0, "", ""}, state: barrier.Spent},
	{file: "cline/real-3.0.65-tool_call-mcp-shop-send-email.json", want: expectation{0, `\{"cancel":false\}\n`, ""}, state: barrier.Pending,
		repeat: &expectation{0, `\{"cancel":true,"errorMessage":"agent-rewind refused effect mcp__shop__send_email:[0-9a-f]{32} \(pending\): .*outcome is unknown.*"\}\n`, ""}},
	{file: "cursor/beforeshellexecution-ls.json", want: expectation{0, `\{"permission":"allow"\}\n`, ""}},
	{file: "cursor/beforeshellexecution-git-push.json", want: expectation{0, `\{"permission":"allow"\}\n`, ""}, state: barrier.Spent,
		repeat: &expectation{0, `\{"permission":"deny","user_message":"agent-rewind refused effect shell:[0-9a-f]{32} \(spent\)","agent_message":"agent-rewind refused effect .*it already fired.*"\}\n`, ""}},
	{file: "cursor/beforemcpexecution-string-input.json", want: expectation{0, `\{"permission":"allow"\}\n`, ""}, state: barrier.Spent,
		repeat: &expectation{0, `\{"permission":"deny",.*"agent_message":"agent-rewind refused effect slack_post_message:.*"\}\n`, ""}},
	{file: "cursor/beforemcpexecution-object-input.json", want: expectation{0, `\{"permission":"allow"\}\n`, ""}},
	{file: "cursor/afterfileedit.json", want: expectation{0, `\{\}\n`, ""}},
	{file: "claude-code/pretooluse-powershell-git-push.json", want: expectation{0, "", ""}, state: barrier.Pending,
		repeat: &expectation{2, "", "outcome is unknown"}},
	{file: "cursor/pretooluse-shell-git-push.json", want: expectation{0, `\{"permission":"allow"\}\n`, ""}, state: barrier.Pending,
		repeat: &expectation{0, `\{"permission":"deny","user_message":"agent-rewind refused effect shell:[0-9a-f]{32} \(pending\)",.*\}\n`, ""}},
	{file: "cursor/pretooluse-mcp-prefixed.json", want: expectation{0, `\{"permission":"allow"\}\n`, ""}, state: barrier.Pending,
		repeat: &expectation{0, `\{"permission":"deny","user_message":"agent-rewind refused effect slack_post_message:[0-9a-f]{32} \(pending\)",.*\}\n`, ""}},
	{file: "cursor/posttooluse-shell.json", want: expectation{0, `\{\}\n`, ""}},
	{file: "cursor/posttooluse-shell.json", before: "cursor/pretooluse-shell-git-push.json", want: expectation{0, `\{\}\n`, ""}, state: barrier.Spent},
	{file: "cursor/posttoolusefailure-shell.json", want: expectation{0, `\{\}\n`, ""}},
	{file: "cursor/posttoolusefailure-shell.json", before: "cursor/pretooluse-shell-git-push.json", want: expectation{0, `\{\}\n`, ""}, state: barrier.Failed},
	{file: "cline/pretooluse-read-file.json", want: expectation{0, `\{"cancel":false\}\n`, ""}},
	{file: "cline/pretooluse-execute-command-git-push.json", want: expectation{0, `\{"cancel":false\}\n`, ""}, state: barrier.Spent,
		repeat: &expectation{0, `\{"cancel":true,"errorMessage":"agent-rewind refused effect shell:[0-9a-f]{32} \(spent\): .*it already fired.*"\}\n`, ""}},
	{file: "cline/pretooluse-use-mcp-tool-slack.json", want: expectation{0, `\{"cancel":false\}\n`, ""}, state: barrier.Spent,
		repeat: &expectation{0, `\{"cancel":true,"errorMessage":"agent-rewind refused effect mcp__slack__slack_post_message:[0-9a-f]{32} \(spent\): .*"\}\n`, ""}},
	{file: "cline/posttooluse-execute-command.json", want: expectation{0, `\{"cancel":false\}\n`, ""}},
	{file: "windsurf/pre-run-command-ls.json", want: expectation{0, "", ""}},
	{file: "windsurf/pre-run-command-git-push.json", want: expectation{0, "", ""}, state: barrier.Spent,
		repeat: &expectation{2, "", "it already fired"}},
	{file: "windsurf/pre-mcp-tool-use-slack.json", want: expectation{0, "", ""}, state: barrier.Spent,
		repeat: &expectation{2, "", "it already fired"}},
	{file: "windsurf/post-run-command.json", want: expectation{0, "", ""}},
	{file: "gemini-cli/beforetool-shell-git-push.json", want: expectation{0, `\{\}\n`, ""}, state: barrier.Spent,
		repeat: &expectation{2, "", "it already fired"}},
	{file: "gemini-cli/beforetool-mcp-slack.json", want: expectation{0, `\{\}\n`, ""}, state: barrier.Spent,
		repeat: &expectation{2, "", "it already fired"}},
	{file: "gemini-cli/aftertool-shell.json", want: expectation{0, `\{\}\n`, ""}},
	// Captured from Gemini CLI 0.61.0 by the real-client harness (SOURCES.md).
	{file: "gemini-cli/real-0.61.0-beforetool-shell-git-push.json", want: expectation{0, `\{\}\n`, ""}, state: barrier.Spent,
		repeat: &expectation{2, "", "it already fired"}},
	{file: "gemini-cli/real-0.61.0-aftertool-shell-git-push.json", want: expectation{0, `\{\}\n`, ""}},
	{file: "gemini-cli/real-0.61.0-aftertool-shell-git-push.json", before: "gemini-cli/real-0.61.0-beforetool-shell-git-push.json", want: expectation{0, `\{\}\n`, ""}, state: barrier.Spent},
	{file: "gemini-cli/real-0.61.0-beforetool-mcp-shop-send-email.json", want: expectation{0, `\{\}\n`, ""}, state: barrier.Spent,
		repeat: &expectation{2, "", "it already fired"}},
	{file: "gemini-cli/real-0.61.0-aftertool-mcp-shop-send-email.json", want: expectation{0, `\{\}\n`, ""}},
	{file: "gemini-cli/real-0.61.0-beforetool-mcp-agent-rewind-checkpoint.json", want: expectation{0, `\{\}\n`, ""}},
	{file: "gemini-cli/real-0.61.0-beforeagent.json", want: expectation{0, "", ""}, prompt: "ship version 2, the key is sk-***"}, // logged, never blocked, nothing on stdout
	{file: "vscode/pretooluse-run-in-terminal-git-push.json", want: expectation{0, "", ""}, state: barrier.Pending,
		repeat: &expectation{0, `\{"hookSpecificOutput":\{"hookEventName":"PreToolUse","permissionDecision":"deny",.*outcome is unknown.*\}\}\n`, ""}},
	{file: "vscode/posttooluse-run-in-terminal.json", want: expectation{0, "", ""}},
	{file: "vscode/posttooluse-run-in-terminal.json", before: "vscode/pretooluse-run-in-terminal-git-push.json", want: expectation{0, "", ""}, state: barrier.Spent},
	// Captured from the real clients (barrier/testdata/hooks/SOURCES.md).
	{file: "cline/real-3.0.65-tool_call-run_commands-git-push.json", want: expectation{0, `\{"cancel":false\}\n`, ""}, state: barrier.Pending,
		repeat: &expectation{0, `\{"cancel":false,"overrideInput":\{"commands":\["printf '%s\\\\n' 'agent-rewind refused effect shell:[0-9a-f]{32} .*outcome is unknown.*' \\u003e\\u00262; exit 2"\]\}\}\n`, ""}},
	{file: "cline/real-3.0.65-tool_result-run_commands-git-push.json", want: expectation{0, `\{"cancel":false\}\n`, ""}},
	{file: "cline/real-3.0.65-tool_result-run_commands-git-push.json", before: "cline/real-3.0.65-tool_call-run_commands-git-push.json", want: expectation{0, `\{"cancel":false\}\n`, ""}, state: barrier.Spent},
	{file: "cline/real-3.0.65-tool_call-editor.json", want: expectation{0, `\{"cancel":false\}\n`, ""}},
	{file: "cline/real-3.0.65-tool_call-mcp-agent-rewind-checkpoint.json", want: expectation{0, `\{"cancel":false\}\n`, ""}},
	{file: "cline/real-3.0.65-tool_result-mcp-agent-rewind-checkpoint.json", want: expectation{0, `\{"cancel":false\}\n`, ""}},
	{file: "cline/tool_call-mcp-slack.json", want: expectation{0, `\{"cancel":false\}\n`, ""}, state: barrier.Pending,
		repeat: &expectation{0, `\{"cancel":true,"errorMessage":"agent-rewind refused effect mcp__slack__slack_post_message:[0-9a-f]{32} \(pending\): .*"\}\n`, ""}},
	{file: "copilot/pretooluse-bash-git-push.json", want: expectation{0, "", ""}, state: barrier.Spent,
		repeat: &expectation{0, `\{"hookSpecificOutput":\{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"agent-rewind refused effect shell:.*it already fired.*"\}\}\n`, ""}},
	{file: "copilot/posttooluse-bash.json", want: expectation{0, "", ""}},
	{file: "copilot/pretooluse-write.json", want: expectation{0, "", ""}},
	{file: "copilot/pretooluse-mcp-agent-rewind.json", want: expectation{0, "", ""}},
	{file: "copilot/pretooluse-mcp-slack.json", want: expectation{0, "", ""}, state: barrier.Spent,
		repeat: &expectation{0, `\{"hookSpecificOutput":\{.*"permissionDecision":"deny","permissionDecisionReason":"agent-rewind refused effect mcp__slack__slack_post_message:.*"\}\}\n`, ""}},
	{file: "codex/real-0.169.0-pretooluse-bash-git-push.json", want: expectation{0, "", ""}, state: barrier.Pending,
		repeat: &expectation{2, "", "outcome is unknown"}},
	{file: "codex/real-0.169.0-posttooluse-bash-git-push.json", before: "codex/real-0.169.0-pretooluse-bash-git-push.json", want: expectation{0, "", ""}, state: barrier.Spent},
	{file: "codex/real-0.169.0-pretooluse-mcp-agent-rewind-checkpoint.json", want: expectation{0, "", ""}},
	{file: "gemini-cli/real-0.61.0-beforetool-write-file.json", want: expectation{0, `\{\}\n`, ""}},
	{file: "gemini-cli/beforetool-mcp-context-slack.json", want: expectation{0, `\{\}\n`, ""}, state: barrier.Spent,
		repeat: &expectation{2, "", "it already fired"}},
	{file: "claude-code/real-2.1.328-pretooluse-bash-git-push.json", want: expectation{0, "", ""}, state: barrier.Pending,
		repeat: &expectation{2, "", "outcome is unknown"}},
	{file: "claude-code/real-2.1.328-posttooluse-bash-git-push.json", want: expectation{0, "", ""}},
	{file: "claude-code/real-2.1.328-posttooluse-bash-git-push.json", before: "claude-code/real-2.1.328-pretooluse-bash-git-push.json", want: expectation{0, "", ""}, state: barrier.Spent},
	{file: "claude-code/real-2.1.328-posttoolusefailure-bash.json", want: expectation{0, "", ""}},
	{file: "claude-code/real-2.1.328-pretooluse-write.json", want: expectation{0, "", ""}},
	{file: "claude-code/real-2.1.328-pretooluse-mcp-shop-send-email.json", want: expectation{0, "", ""}, state: barrier.Pending,
		repeat: &expectation{2, "", "outcome is unknown"}},
	{file: "claude-code/real-2.1.328-posttooluse-mcp-shop-send-email.json", want: expectation{0, "", ""}},
	{file: "claude-code/real-2.1.328-posttooluse-mcp-shop-send-email.json", before: "claude-code/real-2.1.328-pretooluse-mcp-shop-send-email.json", want: expectation{0, "", ""}, state: barrier.Spent},
	{file: "claude-code/real-2.1.328-pretooluse-mcp-agent-rewind-checkpoint.json", want: expectation{0, "", ""}},
	{file: "explicit/charge.json", want: expectation{0, `admitted "invoice-2026-0042-charge": spent \(chain entry 0\)\n`, ""}, state: barrier.Spent,
		repeat: &expectation{2, "", "it already fired"}},
}

// Every hook fixture in barrier/testdata/hooks, through the real binary, in a fresh workspace.
func TestGuardHookFixtures(t *testing.T) {
	// One of the package's slowest (each process a -race binary): run beside the others' tail.
	t.Parallel()
	dir := filepath.Join("..", "..", "..", "barrier", "testdata", "hooks")
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".json") {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil || len(files) == 0 {
		t.Fatalf("fixtures in %s: %v", dir, err)
	}
	for _, f := range files {
		if !slices.ContainsFunc(fixtureCases, func(c fixtureCase) bool { return c.file == f }) {
			t.Errorf("fixture %s has no case in fixtureCases: add what the guard must do with it", f)
		}
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	check := func(t *testing.T, what string, r result, want expectation) {
		t.Helper()
		if r.code != want.code || !regexp.MustCompile(`^(?s:`+want.stdout+`)$`).MatchString(r.stdout) ||
			(want.stderr == "") != (r.stderr == "") || !strings.Contains(r.stderr, want.stderr) {
			t.Fatalf("%s: code %d, stdout %q, stderr %q; want code %d, stdout =~ %q, stderr ⊇ %q", what, r.code, r.stdout, r.stderr, want.code, want.stdout, want.stderr)
		}
	}
	for _, c := range fixtureCases {
		name := c.file
		if c.before != "" {
			name += " after " + c.before
		}
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			if c.before != "" {
				if r := guard(t, root, read(c.before)); r.code != 0 {
					t.Fatalf("%s: %+v", c.before, r)
				}
			}
			input := read(c.file)
			check(t, c.file, guard(t, root, input), c.want)
			if c.prompt != "" {
				var l struct {
					Prompts []struct {
						Groups []struct{ Prompt struct{ Text string } }
					}
				}
				r := run(t, root, "", "--workspace", root, "--json", "list")
				if err := json.Unmarshal([]byte(r.stdout), &l); err != nil || len(l.Prompts) != 1 || len(l.Prompts[0].Groups) != 1 || l.Prompts[0].Groups[0].Prompt.Text != c.prompt {
					t.Fatalf("list after the prompt: %s %s (%v); want the prompt %q", r.stdout, r.stderr, err, c.prompt)
				}
				return
			}
			if c.state == "" {
				noStore(t, root)
				return
			}
			if rec := ledgerRecord(t, root, onlyKey(t, root)); rec.State != c.state {
				t.Fatalf("state %s, want %s", rec.State, c.state)
			}
			if c.repeat != nil {
				// A new call id: tool_use_id, or the "id" of Cline's tool_call.
				again := regexp.MustCompile(`"(tool_use_id|id)":\s*"([^"]*)"`).ReplaceAllString(input, `"${1}": "${2}_again"`)
				check(t, c.file+" again", guard(t, root, again), *c.repeat)
			}
			verifyChain(t, root)
		})
	}
}

// The path taken before every tool call that is not an effect touches nothing: no store is
// created, also by the reports that follow such calls. Input the guard cannot read is refused
// (exit 2: it may be a call about to run, unrecorded) unless it names a report, which is a
// visible, non-blocking error (exit 1).
func TestGuardHotPathAndBadInput(t *testing.T) {
	root := t.TempDir()
	for _, in := range []string{
		bashHook(t, "PreToolUse", "go test ./... 2>&1 | tail -20", "toolu_1"),
		hookInput(t, "PreToolUse", "Read", map[string]any{"file_path": "/x"}, "toolu_2", nil),
		bashHook(t, "PostToolUse", "go test ./...", "toolu_1"),
		hookInput(t, "PreToolUse", "mcp__github__get_pull_request", map[string]any{"number": 1}, "toolu_3", nil),
		hookInput(t, "PreToolUse", "mcp__plugin_agent-rewind_agent-rewind__guard_effect", map[string]any{"key": "x"}, "toolu_4", nil),
	} {
		if r := guard(t, root, in); r.code != 0 || r.stdout != "" || r.stderr != "" {
			t.Fatalf("%s: %+v", in, r)
		}
	}
	noStore(t, root)

	for _, c := range []struct {
		in, want string
		code     int
	}{
		{"", "it is empty", 2},
		{"not json", "does not start with '{'", 2},
		{`{"tool_name": "Bash"}`, `neither "key"`, 2},
		{`{"key": "k"`, "not valid JSON", 2},
		{`{"hook_event_name": "PostToolUse"}`, `PostToolUse hook input without "tool_name"`, 1},
	} {
		r := guard(t, root, c.in)
		if r.code != c.code || r.stdout != "" || !strings.Contains(r.stderr, c.want) || !strings.Contains(r.stderr, "Gemini CLI (BeforeTool") {
			t.Fatalf("input %q: %+v", c.in, r)
		}
		r = guard(t, root, c.in, "--json")
		var e struct {
			Error    string
			ExitCode int
		}
		if r.code != c.code || json.Unmarshal([]byte(r.stdout), &e) != nil || e.ExitCode != c.code || !strings.Contains(e.Error, c.want) {
			t.Fatalf("input %q with --json: %+v", c.in, r)
		}
	}
	// A client's input that lacks what the guard needs is refused in that client's protocol.
	var cancel struct {
		Cancel       bool
		ErrorMessage string
	}
	if r := guard(t, root, `{"hookName": "PreToolUse", "preToolUse": {}}`); r.code != 0 || json.Unmarshal([]byte(r.stdout), &cancel) != nil || !cancel.Cancel ||
		!strings.Contains(cancel.ErrorMessage, `Cline PreToolUse hook input without a "preToolUse" object`) {
		t.Fatalf("broken Cline input: %+v", r)
	}
	noStore(t, root)
}

// The rules file adds effects; a rules file that cannot be used refuses every decision (fail
// closed) but still lets reports through.
func TestGuardRulesFile(t *testing.T) {
	root := t.TempDir()
	rules := filepath.Join(stateDir(t, root), barrier.RulesFileName)
	if err := os.WriteFile(rules, []byte(`{"version": 1, "rules": [{"name": "deploy-script", "command": "^deploy\\.sh( |$)"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := guard(t, root, bashHook(t, "PreToolUse", "./scripts/deploy.sh --prod", "toolu_d1")); r.code != 0 {
		t.Fatalf("deploy: %+v", r)
	}
	if rec := ledgerRecord(t, root, onlyKey(t, root)); rec.Rule != "deploy-script" || rec.State != barrier.Pending {
		t.Fatalf("record: %+v", rec)
	}
	if r := guard(t, root, bashHook(t, "PreToolUse", "./scripts/deploy.sh --prod", "toolu_d2")); r.code != 2 {
		t.Fatalf("deploy again: %+v", r)
	}

	if err := os.WriteFile(rules, []byte(`{"version": 1, "rules": [{"name": "x", "comand": "^make"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	r := guard(t, root, bashHook(t, "PreToolUse", "ls", "toolu_e1"))
	if r.code != 2 || !strings.Contains(r.stderr, "comand") {
		t.Fatalf("bad rules file, PreToolUse: %+v", r)
	}
	if r := guard(t, root, bashHook(t, "PostToolUse", "./scripts/deploy.sh --prod", "toolu_d1")); r.code != 0 {
		t.Fatalf("bad rules file, PostToolUse: %+v", r)
	}
	if rec := ledgerRecord(t, root, onlyKey(t, root)); rec.State != barrier.Spent {
		t.Fatalf("PostToolUse under a bad rules file: %+v", rec)
	}
	verifyChain(t, root)
}

func TestReleaseAndEffects(t *testing.T) {
	root := t.TempDir()
	if r := run(t, root, "", "effects"); r.code != 1 || !strings.Contains(r.stderr, "no agent-rewind state here") {
		t.Fatalf("effects before anything: %+v", r)
	}
	guard(t, root, `{"key": "email-customer-42", "payload": {"to": "c42@example.com"}, "description": "send the invoice mail"}`)
	guard(t, root, bashHook(t, "PreToolUse", "terraform apply -auto-approve", "toolu_tf"))
	if ledgerRecord(t, root, "email-customer-42") == nil {
		t.Fatal("no record for email-customer-42")
	}

	r := run(t, root, "", "effects")
	if r.code != 0 || !strings.Contains(r.stdout, "KEY") || !strings.Contains(r.stdout, "email-customer-42") ||
		!strings.Contains(r.stdout, "toolu_tf") || !strings.Contains(r.stdout, "1 pending or failed") {
		t.Fatalf("effects: %+v", r)
	}
	var list struct {
		Ledger  string            `json:"ledger"`
		Effects []*barrier.Record `json:"effects"`
	}
	r = run(t, root, "", "--json", "effects", "--state", "pending")
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || len(list.Effects) != 1 || list.Effects[0].ToolUseID != "toolu_tf" ||
		list.Ledger != filepath.Join(stateDir(t, root), "effects") {
		t.Fatalf("effects --json --state pending: %v\n%s", err, r.stdout)
	}
	tf := list.Effects[0].Key
	if r := run(t, root, "", "effects", "--state", "bogus"); r.code != 80 {
		t.Fatalf("effects --state bogus: %+v", r)
	}
	if r := run(t, root, "", "effects", tf); r.code != 0 || !strings.Contains(r.stdout, "new -> pending") || !strings.Contains(r.stdout, "terraform apply") {
		t.Fatalf("effects KEY: %+v", r)
	}

	if r := run(t, root, "", "release", tf); r.code != 80 || !strings.Contains(r.stderr, "--reason") {
		t.Fatalf("release without --reason: %+v", r)
	}
	if r := run(t, root, "", "release", tf, "--reason", "  "); r.code != 1 || !strings.Contains(r.stderr, "a reason is required") {
		t.Fatalf("release with a blank reason: %+v", r)
	}
	if r := run(t, root, "", "release", "no-such-key", "--reason", "x"); r.code != 1 || !strings.Contains(r.stderr, "no such effect key") {
		t.Fatalf("release of an unknown key: %+v", r)
	}
	r = run(t, root, "", "--json", "release", tf, "--reason", "checked: the plan was never applied")
	d := decision(t, r)
	if r.code != 0 || d.Code != barrier.CodeReleased || d.State != barrier.Released || d.Seq == nil || len(d.Record.History) != 2 ||
		d.Record.History[1].By != "cli" || d.Record.History[1].Reason != "checked: the plan was never applied" {
		t.Fatalf("release --json: %+v", r)
	}
	if r := run(t, root, "", "release", tf, "--reason", "again"); r.code != 0 || !strings.Contains(r.stdout, "already released") {
		t.Fatalf("second release: %+v", r)
	}
	es := readChain(t, root)
	var rel barrier.ReleaseEntry
	if last := es[len(es)-1]; last.Kind != "release" || json.Unmarshal(last.Data, &rel) != nil || rel.Key != tf || rel.From != barrier.Pending || rel.By != "cli" {
		t.Fatalf("last chain entry: %+v", es[len(es)-1])
	}
	verifyChain(t, root)
}

func mustEval(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
