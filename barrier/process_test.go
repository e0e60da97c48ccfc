package barrier

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The real-process tests re-execute this test binary as a guard: with BARRIER_TEST_HELPER=guard,
// TestMain reads one input on stdin, runs a Guard over the ledger in BARRIER_TEST_LEDGER with a
// file-backed Recorder (BARRIER_TEST_CHAIN), writes the answer and exits with its code, exactly
// as `agent-rewind guard` will.
const (
	envHelper     = "BARRIER_TEST_HELPER"
	envLedger     = "BARRIER_TEST_LEDGER"
	envChain      = "BARRIER_TEST_CHAIN"
	envCheckpoint = "BARRIER_TEST_CHECKPOINT"
	envGate       = "BARRIER_TEST_GATE"    // wait until this file exists before deciding
	envHangAt     = "BARRIER_TEST_HANG_AT" // "linked" or "admitted": stop there and wait to be killed
	envMarker     = "BARRIER_TEST_MARKER"  // file created when the helper reaches envHangAt
)

func TestMain(m *testing.M) {
	if os.Getenv(envHelper) == "guard" {
		os.Exit(guardHelper())
	}
	// A race-enabled child sleeps a second at exit (GORACE's atexit_sleep_ms) unless told not to.
	if _, set := os.LookupEnv("GORACE"); !set {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	os.Exit(m.Run())
}

func guardHelper() int {
	var in bytes.Buffer
	if _, err := in.ReadFrom(os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if gate := os.Getenv(envGate); gate != "" {
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if _, err := os.Stat(gate); err == nil {
				break
			}
		}
	}
	if stage := os.Getenv(envHangAt); stage != "" {
		testHookAdmit = func(s string) {
			if s == stage {
				os.WriteFile(os.Getenv(envMarker), []byte(s), 0o600)
				select {} // wait for SIGKILL
			}
		}
	}
	rules, rulesErr := LoadRules(filepath.Dir(filepath.Dir(os.Getenv(envLedger))))
	g := &Guard{
		Rules:      rules,
		RulesErr:   rulesErr,
		OpenLedger: func() (*Ledger, error) { return Open(os.Getenv(envLedger), fileRecorder{os.Getenv(envChain)}) },
		Checkpoint: func() (string, error) { return os.Getenv(envCheckpoint), nil },
	}
	o := g.Handle(in.Bytes())
	os.Stdout.WriteString(o.Answer.Stdout)
	os.Stderr.WriteString(o.Answer.Stderr)
	return o.Answer.ExitCode
}

// workspace is one temporary workspace for real-process tests.
type workspace struct {
	t      *testing.T
	ledger string // .rewind/effects
	chain  string // the chain stand-in
}

func newWorkspace(t *testing.T) *workspace {
	root := t.TempDir()
	return &workspace{t: t, ledger: filepath.Join(root, ".rewind", "effects"), chain: filepath.Join(root, ".rewind", "chain.jsonl")}
}

type result struct {
	code           int
	stdout, stderr string
}

func (w *workspace) command(input []byte, extraEnv ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envHelper+"=guard", envLedger+"="+w.ledger, envChain+"="+w.chain, envCheckpoint+"=cp-1")
	cmd.Env = append(cmd.Env, extraEnv...)
	cmd.Stdin = bytes.NewReader(input)
	return cmd
}

func (w *workspace) run(input []byte, extraEnv ...string) result {
	w.t.Helper()
	cmd := w.command(input, extraEnv...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		w.t.Fatal(err)
	}
	return result{cmd.ProcessState.ExitCode(), out.String(), errb.String()}
}

func (w *workspace) entries() []entry { return readEntries(w.t, w.chain) }

func kindsOf(es []entry) string {
	var k []string
	for _, e := range es {
		k = append(k, e.Kind)
	}
	return strings.Join(k, ",")
}

func hookInput(event, toolUseID, command string) []byte {
	b, _ := json.Marshal(map[string]any{
		"session_id": "s1", "transcript_path": "/tmp/t.jsonl", "cwd": "/work", "permission_mode": "default",
		"hook_event_name": event, "tool_name": "Bash", "tool_use_id": toolUseID,
		"tool_input": map[string]any{"command": command, "description": "push"},
	})
	return b
}

// TestProcessesRaceOnOneKey starts 16 guard processes on one new key at once: exactly one is
// admitted, the 15 others are refused, and all 16 decisions are on the chain, the admission
// first.
func TestProcessesRaceOnOneKey(t *testing.T) {
	for _, c := range []struct {
		name  string
		input func(i int) []byte
		code  Code // the losers' refusal
	}{
		{"hook", func(i int) []byte {
			return hookInput("PreToolUse", fmt.Sprintf("toolu_%02d", i), "git push origin main")
		}, CodePending},
		{"explicit", func(int) []byte { return []byte(`{"key":"deploy-42","payload":{"env":"prod"}}`) }, CodeSpent},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorkspace(t)
			gate := filepath.Join(t.TempDir(), "go")
			const n = 16
			results := make([]result, n)
			var wg sync.WaitGroup
			cmds := make([]*exec.Cmd, n)
			outs := make([]*bytes.Buffer, n)
			errs := make([]*bytes.Buffer, n)
			for i := range n {
				cmds[i] = w.command(c.input(i), envGate+"="+gate)
				outs[i], errs[i] = &bytes.Buffer{}, &bytes.Buffer{}
				cmds[i].Stdout, cmds[i].Stderr = outs[i], errs[i]
				if err := cmds[i].Start(); err != nil {
					t.Fatal(err)
				}
			}
			os.WriteFile(gate, nil, 0o600) // all 16 are running: let them race
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					cmds[i].Wait()
					results[i] = result{cmds[i].ProcessState.ExitCode(), outs[i].String(), errs[i].String()}
				}()
			}
			wg.Wait()

			admitted, refused := 0, 0
			for i, r := range results {
				switch r.code {
				case 0:
					admitted++
					if r.stdout != "" || r.stderr != "" {
						t.Errorf("process %d admitted but printed %q %q", i, r.stdout, r.stderr)
					}
				case 2:
					refused++
					if !strings.Contains(r.stderr, "agent-rewind refused effect") || r.stdout != "" {
						t.Errorf("process %d refused with stdout %q stderr %q", i, r.stdout, r.stderr)
					}
				default:
					t.Errorf("process %d exited %d: %s", i, r.code, r.stderr)
				}
			}
			if admitted != 1 || refused != n-1 {
				t.Fatalf("%d admitted, %d refused; want 1 and %d", admitted, refused, n-1)
			}
			es := w.entries()
			if len(es) != n || es[0].Kind != KindEffect || strings.Count(kindsOf(es), KindRefusal) != n-1 {
				t.Fatalf("chain: %s", kindsOf(es))
			}
			for _, e := range es[1:] {
				var re RefusalEntry
				json.Unmarshal(e.Data, &re)
				if re.Code != c.code || re.AdmissionSeq != 0 {
					t.Errorf("refusal entry %+v, want code %s citing admission seq 0 (the first entry)", re, c.code)
				}
			}
		})
	}
}

// TestProcessAdmitThenRetry: a second process with the same effect is refused as spent, one with
// another payload as a payload mismatch, each on the chain.
func TestProcessAdmitThenRetry(t *testing.T) {
	w := newWorkspace(t)
	if r := w.run([]byte(`{"key":"invoice-7-email","payload":{"to":"a@example.com"},"description":"send invoice 7"}`)); r.code != 0 {
		t.Fatalf("first: %+v", r)
	}
	r := w.run([]byte(`{"key":"invoice-7-email","payload":{"to":"a@example.com"}}`))
	if r.code != 2 || !strings.Contains(r.stderr, "already fired") || !strings.Contains(r.stderr, "checkpoint cp-1 was current") {
		t.Fatalf("retry: %+v", r)
	}
	r = w.run([]byte(`{"key":"invoice-7-email","payload":{"to":"b@example.com"}}`))
	if r.code != 2 || !strings.Contains(r.stderr, "different payload") {
		t.Fatalf("other payload: %+v", r)
	}
	if got := kindsOf(w.entries()); got != "effect,refusal,refusal" {
		t.Errorf("chain %s", got)
	}
}

// TestProcessKilledAfterPending kills a guard with SIGKILL once its pending record is durable;
// the next guard on that key is refused as outcome unknown, until a person releases the key.
func TestProcessKilledAfterPending(t *testing.T) {
	for _, stage := range []string{"linked", "admitted"} {
		t.Run(stage, func(t *testing.T) {
			w := newWorkspace(t)
			marker := filepath.Join(t.TempDir(), "reached")
			cmd := w.command(hookInput("PreToolUse", "toolu_killed", "npm publish"), envHangAt+"="+stage, envMarker+"="+marker)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(30 * time.Second)
			for {
				if _, err := os.Stat(marker); err == nil {
					break
				}
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatal("the helper never reached the stage")
				}
				time.Sleep(2 * time.Millisecond)
			}
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			cmd.Wait()

			r := w.run(hookInput("PreToolUse", "toolu_next", "npm publish"))
			if r.code != 2 || !strings.Contains(r.stderr, "outcome is unknown") || !strings.Contains(r.stderr, "agent-rewind release shell:") {
				t.Fatalf("after the kill: %+v", r)
			}
			// A late PostToolUse of another call cannot confirm it.
			if r := w.run(hookInput("PostToolUse", "toolu_next", "npm publish")); r.code != 0 {
				t.Fatalf("PostToolUse of the refused call: %+v", r)
			}
			wantChain := "refusal"
			if stage == "admitted" {
				wantChain = "effect,refusal" // killed after the admission reached the chain
			}
			if got := kindsOf(w.entries()); got != wantChain {
				t.Errorf("chain %s, want %s", got, wantChain)
			}

			// The person checks the registry, finds nothing published, and releases the key.
			l, err := Open(w.ledger, fileRecorder{w.chain})
			if err != nil {
				t.Fatal(err)
			}
			recs, err := l.List()
			if err != nil || len(recs) != 1 || recs[0].State != Pending {
				t.Fatalf("ledger after kill: %v %v", recs, err)
			}
			if _, err := l.Release(recs[0].Key, "checked npm: 2.1.0 was not published", "cli"); err != nil {
				t.Fatal(err)
			}
			if r := w.run(hookInput("PreToolUse", "toolu_again", "npm publish")); r.code != 0 {
				t.Fatalf("after release: %+v", r)
			}
		})
	}
}

// TestProcessConfirmationAndDenial runs the hook sequence of Claude Code in real processes.
func TestProcessConfirmationAndDenial(t *testing.T) {
	w := newWorkspace(t)
	steps := []struct {
		input []byte
		code  int
		want  string
	}{
		{hookInput("PreToolUse", "toolu_a", "gh release create v1"), 0, ""},
		{hookInput("PostToolUse", "toolu_a", "gh release create v1"), 0, ""},
		{hookInput("PreToolUse", "toolu_b", "gh release create v1"), 2, "already fired"},
		{hookInput("PreToolUse", "toolu_c", "kubectl apply -f prod.yaml"), 0, ""},
		{hookInput("PermissionDenied", "toolu_c", "kubectl apply -f prod.yaml"), 0, ""},
		{hookInput("PreToolUse", "toolu_d", "kubectl apply -f prod.yaml"), 0, ""},
		{hookInput("PostToolUseFailure", "toolu_d", "kubectl apply -f prod.yaml"), 0, ""},
		{hookInput("PreToolUse", "toolu_e", "kubectl apply -f prod.yaml"), 2, "failed"},
		{hookInput("PreToolUse", "toolu_f", "ls -la"), 0, ""},
		{hookInput("PostToolUse", "toolu_f", "ls -la"), 0, ""},
	}
	for i, s := range steps {
		r := w.run(s.input)
		if r.code != s.code || !strings.Contains(r.stderr, s.want) || r.stdout != "" {
			t.Fatalf("step %d: %+v, want exit %d mentioning %q", i, r, s.code, s.want)
		}
	}
	if got := kindsOf(w.entries()); got != "effect,confirm,refusal,effect,release,effect,failure,refusal" {
		t.Errorf("chain %s", got)
	}
}

// TestProcessRulesFile: a broken rules file fails closed in a real process.
func TestProcessRulesFile(t *testing.T) {
	w := newWorkspace(t)
	os.MkdirAll(filepath.Dir(w.ledger), 0o700)
	rules := filepath.Join(filepath.Dir(w.ledger), "effects.json")
	os.WriteFile(rules, []byte(`{"version": 1, "rules": [{"name": "deploy", "command": "^make deploy( |$)"}]}`), 0o600)
	if r := w.run(hookInput("PreToolUse", "t1", "make deploy ENV=prod")); r.code != 0 {
		t.Fatalf("admission by a file rule: %+v", r)
	}
	if r := w.run(hookInput("PreToolUse", "t2", "make deploy ENV=prod")); r.code != 2 {
		t.Fatalf("repeat: %+v", r)
	}
	os.WriteFile(rules, []byte(`{"version": 1, "rules": [{"name": "deploy", "comand": "x"}]}`), 0o600)
	if r := w.run(hookInput("PreToolUse", "t3", "ls")); r.code != 2 || !strings.Contains(r.stderr, `unknown field "comand"`) {
		t.Fatalf("broken rules file: %+v", r)
	}
}
