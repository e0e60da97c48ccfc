package barrier

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkGuardNonEffect is the hot path run before every tool call: parse a PreToolUse hook
// input, classify it with the built-in rules, answer. No ledger, no I/O.
func BenchmarkGuardNonEffect(b *testing.B) {
	input := fixture(b, "claude-code/pretooluse-bash-ls.json")
	g := &Guard{OpenLedger: func() (*Ledger, error) { b.Fatal("ledger opened"); return nil, nil }}
	b.SetBytes(int64(len(input)))
	b.ReportAllocs()
	for b.Loop() {
		if o := g.Handle(input); o.Action.Kind != ActNone {
			b.Fatal(o.Action)
		}
	}
}

// BenchmarkClassifyLongScript classifies a long multi-line shell script with substitutions,
// here-documents and wrappers that holds no effect.
func BenchmarkClassifyLongScript(b *testing.B) {
	script := strings.Repeat(`set -euo pipefail
cd "$(git rev-parse --show-toplevel)" && FOO=1 sudo -E env BAR=2 timeout 60 go test -race ./... 2>&1 | tee /tmp/log
for f in $(ls *.go); do gofmt -l "$f"; done
cat <<EOF > notes.txt
git push origin main
EOF
docker build -t app . && kubectl get pods -n prod | grep web || true
`, 10)
	in := bashInput(script)
	rs := DefaultRules()
	b.SetBytes(int64(len(script)))
	b.ReportAllocs()
	for b.Loop() {
		if m := rs.Classify(in); m != nil {
			b.Fatal(m)
		}
	}
}

// BenchmarkParseRulesFile is what a guard pays per process when the workspace has a rules
// file: read nothing (the bytes are given), parse, compile the patterns.
func BenchmarkParseRulesFile(b *testing.B) {
	data := []byte(`{"version":1,"disable":["ssh-remote"],"rules":[
		{"name":"deploy-script","command":"^(\\./)?scripts/deploy\\.sh( |$)"},
		{"name":"make-release","command":"^make (release|publish)( |$)"},
		{"name":"stripe-writes","tool":"^mcp__stripe__(create|update|cancel)_","key_fields":["idempotency_key"]},
		{"name":"git-push","command":"^git push prod( |$)"}]}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseRules(data, "bench"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAdmit admits a new key per iteration, durably (fsync of record, index and
// directories), with an in-memory Recorder: the ledger's own cost of an admission.
func BenchmarkAdmit(b *testing.B) {
	l, err := Open(filepath.Join(b.TempDir(), "effects"), &memRecorder{})
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		i++
		req := Request{Key: fmt.Sprintf("bench-%d", i), Payload: []byte(`{"amount":100}`), ToolUseID: fmt.Sprintf("t%d", i), Confirmable: true}
		if d, err := l.Admit(req); err != nil || !d.Admitted {
			b.Fatal(d, err)
		}
	}
}

// BenchmarkRefuse refuses a spent key per iteration: one unlocked read and one chain entry.
func BenchmarkRefuse(b *testing.B) {
	l, err := Open(filepath.Join(b.TempDir(), "effects"), &memRecorder{})
	if err != nil {
		b.Fatal(err)
	}
	req := Request{Key: "spent", Payload: []byte(`{"amount":100}`)}
	if _, err := l.Admit(req); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if d, _ := l.Admit(req); d.Code != CodeSpent {
			b.Fatal(d)
		}
	}
}

// BenchmarkConfirmUntracked is PostToolUse for a call that was never an effect, the common
// case: one failed open.
func BenchmarkConfirmUntracked(b *testing.B) {
	l, err := Open(filepath.Join(b.TempDir(), "effects"), &memRecorder{})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if d, _ := l.Confirm("toolu_untracked", "bench"); d.Code != CodeUntracked {
			b.Fatal(d)
		}
	}
}

// Process benchmarks: the wall time of one guard process, from exec to exit, measured on
// internal/guardprobe (the barrier alone, standing in for `agent-rewind guard`) against `true`,
// the process-start floor. They report p50 and p99 of both and the ratio of the p50s.

func buildProbe(b *testing.B) string {
	b.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		b.Skip("go is not on PATH: cannot build the guard probe")
	}
	out := filepath.Join(b.TempDir(), "guardprobe")
	cmd := exec.Command(gobin, "build", "-o", out, "./internal/guardprobe")
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("build guardprobe: %v\n%s", err, msg)
	}
	return out
}

// benchProcess measures guard processes fed input(i); prepare, when not nil, is run once first
// and not measured.
func benchProcess(b *testing.B, prepare []byte, input func(i int) []byte, wantCode int) {
	probe := buildProbe(b)
	truePath, err := exec.LookPath("true")
	if err != nil {
		b.Skip("no `true` on PATH for the process-start floor")
	}
	root := b.TempDir()
	run := func(path string, in []byte) (time.Duration, int) {
		cmd := exec.Command(path)
		cmd.Dir = root
		cmd.Stdin = bytes.NewReader(in)
		start := time.Now()
		err := cmd.Run()
		d := time.Since(start)
		if err != nil && cmd.ProcessState == nil {
			b.Fatal(err)
		}
		return d, cmd.ProcessState.ExitCode()
	}
	if prepare != nil {
		run(probe, prepare)
	}
	var guard, floor []time.Duration
	i := 0
	for b.Loop() {
		i++
		d, code := run(probe, input(i))
		if code != wantCode {
			b.Fatalf("probe exited %d, want %d", code, wantCode)
		}
		guard = append(guard, d)
		d, _ = run(truePath, nil)
		floor = append(floor, d)
	}
	pct := func(ds []time.Duration, p float64) float64 {
		s := slices.Clone(ds)
		slices.Sort(s)
		return float64(s[min(len(s)-1, int(float64(len(s))*p))].Microseconds())
	}
	b.ReportMetric(pct(guard, 0.50), "guard-p50-µs")
	b.ReportMetric(pct(guard, 0.99), "guard-p99-µs")
	b.ReportMetric(pct(floor, 0.50), "true-p50-µs")
	b.ReportMetric(pct(floor, 0.99), "true-p99-µs")
	b.ReportMetric(pct(guard, 0.50)/max(pct(floor, 0.50), 1), "p50-ratio")
}

// BenchmarkProcessNonEffect: a guard process for a PreToolUse that is not an effect.
func BenchmarkProcessNonEffect(b *testing.B) {
	in := fixture(b, "claude-code/pretooluse-bash-ls.json")
	benchProcess(b, nil, func(int) []byte { return in }, 0)
}

// BenchmarkProcessAdmission: a guard process that admits a new effect (durable ledger record
// and a chain stand-in entry, both fsynced).
func BenchmarkProcessAdmission(b *testing.B) {
	benchProcess(b, nil, func(i int) []byte { return []byte(fmt.Sprintf(`{"key":"bench-%d","payload":{"n":%d}}`, i, i)) }, 0)
}

// BenchmarkProcessRefusal: a guard process that refuses a spent effect.
func BenchmarkProcessRefusal(b *testing.B) {
	in := []byte(`{"key":"spent-once","payload":{}}`)
	benchProcess(b, in, func(int) []byte { return in }, 2)
}
