// Command guardprobe is a stand-in for `agent-rewind guard`, used by the barrier's process
// benchmarks to measure the wall time of one guard process (start, read stdin, load rules,
// classify, and for effects decide and record) without the CLI's other dependencies. It runs in
// the current directory as the workspace root, and records on .rewind/probe-chain.jsonl.
package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"path/filepath"

	"github.com/agent-rewind/rewind/barrier"
	"github.com/agent-rewind/rewind/internal/lockfile"
)

// fileRecorder appends one JSON line per entry under flock; its seq is the line number.
type fileRecorder struct{ path string }

func (r fileRecorder) Record(kind string, data any) (int64, error) {
	f, err := os.OpenFile(r.path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if err := lockfile.Lock(f, lockfile.Exclusive); err != nil {
		return 0, err
	}
	var n int64
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		n++
	}
	line, err := json.Marshal(map[string]any{"seq": n + 1, "kind": kind, "data": data})
	if err != nil {
		return 0, err
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		return 0, err
	}
	return n + 1, f.Sync()
}

func main() {
	in, err := io.ReadAll(io.LimitReader(os.Stdin, barrier.MaxInputSize+1))
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(1)
	}
	rules, rulesErr := barrier.LoadRules(".")
	g := &barrier.Guard{
		Rules:    rules,
		RulesErr: rulesErr,
		OpenLedger: func() (*barrier.Ledger, error) {
			return barrier.Open(filepath.Join(".rewind", "effects"), fileRecorder{filepath.Join(".rewind", "probe-chain.jsonl")})
		},
	}
	o := g.Handle(in)
	os.Stdout.WriteString(o.Answer.Stdout)
	os.Stderr.WriteString(o.Answer.Stderr)
	os.Exit(o.Answer.ExitCode)
}
