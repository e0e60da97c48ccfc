package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/agent-rewind/rewind/tools/bench/measure"
)

// The analyze suite (issue 6): "agent-rewind analyze --file F --ndjson" on a generated 128 MiB
// NDJSON capture (goal at least 150 MB/s, peak RSS at most 64 MiB beyond the key table), with
// sha256sum of the same file as the floor; and, when the binary has it, "cache-compare" on two
// 1 MiB request bodies (goal under 20 ms).
//
// The capture records are built by analyzeRecord from the nine-call corpus. Their shape follows
// issue 6's list (method, origin, path, a subset of headers, body, usage token counts, scope);
// when analyze documents its capture format, make analyzeRecord match it.
func init() {
	register(Suite{
		Name:        "analyze",
		Description: "agent-rewind analyze on 128 MiB of NDJSON (MB/s, peak RSS) vs sha256sum; cache-compare on 1 MiB bodies",
		Modules:     []string{"analyze", "cli"},
		Run:         runAnalyze,
	})
}

// analyzeDistinct is how many distinct request bodies the capture cycles through: the rest are
// exact repeats, and the key table stays small, so peak RSS measures the streaming itself.
const analyzeDistinct = 1000

// analyzeRecord returns capture record i, built on one of the corpus's request bodies with its
// response's usage, varied so that there are analyzeDistinct distinct requests.
func analyzeRecord(i int, bodies []map[string]any, usages []map[string]any) ([]byte, error) {
	k := i % len(bodies)
	body := map[string]any{}
	for key, v := range bodies[k] {
		body[key] = v
	}
	body["metadata"] = map[string]any{"user_id": fmt.Sprintf("bench-user-%d", i%analyzeDistinct)}
	return json.Marshal(map[string]any{
		"method": "POST", "origin": "https://api.anthropic.com", "path": "/v1/messages",
		"headers": map[string]string{"anthropic-version": "2023-06-01", "content-type": "application/json"},
		"body":    body, "usage": usages[k], "scope": "bench",
	})
}

func runAnalyze(ctx context.Context, b *Bench) error {
	agent, err := b.Agent(ctx)
	if err != nil {
		return err
	}
	if err := agent.Require(ctx, b, []string{"analyze"}); err != nil {
		return err
	}
	sha, err := exec.LookPath("sha256sum")
	if err != nil {
		return fmt.Errorf("sha256sum is not on PATH (coreutils): it is the throughput floor")
	}
	var bodies, usages []map[string]any
	for i := 1; i <= 9; i++ {
		var req, resp map[string]any
		for _, x := range []struct {
			name string
			v    *map[string]any
		}{{fmt.Sprintf("nine-call/unique/%02d.request.json", i), &req}, {fmt.Sprintf("nine-call/unique/%02d.response.json", i), &resp}} {
			p, err := b.InputFile(x.name)
			if err != nil {
				return err
			}
			raw, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if err := json.Unmarshal(raw, x.v); err != nil {
				return fmt.Errorf("%s: %w", x.name, err)
			}
		}
		u, _ := resp["usage"].(map[string]any)
		bodies, usages = append(bodies, req), append(usages, u)
	}

	dir, err := b.TempDir("analyze")
	if err != nil {
		return err
	}
	limit := int64(b.Reps(128<<20, 16<<20))
	capture := filepath.Join(dir, "capture.ndjson")
	size, records, sum, err := writeCapture(capture, limit, bodies, usages)
	if err != nil {
		return err
	}
	b.GeneratedInput(fmt.Sprintf("analyze capture bytes<=%d", limit), "analyzeRecord (suite_analyze.go) over nine-call/unique",
		map[string]any{"max_bytes": limit, "records": records, "distinct_requests": analyzeDistinct}, sum, size)
	tiny := filepath.Join(dir, "one.ndjson")
	if _, _, _, err := writeCapture(tiny, 1, bodies, usages); err != nil {
		return err
	}

	analyze := func(file string) func(context.Context) (measure.Sample, error) {
		return func(ctx context.Context) (measure.Sample, error) {
			r, err := measure.Run(agent.Command(ctx, dir, "--json", "analyze", "--file", file, "--ndjson"))
			return r.Sample, err
		}
	}
	ss, err := measure.Alternate(ctx, b.Reps(5, 3),
		measure.Arm{Name: fmt.Sprintf("agent-rewind analyze --file --ndjson (%d records)", records), Run: analyze(capture)},
		measure.Arm{Name: "sha256sum of the same file", Run: func(ctx context.Context) (measure.Sample, error) {
			r, err := measure.Run(exec.CommandContext(ctx, sha, capture))
			return r.Sample, err
		}},
		measure.Arm{Name: "agent-rewind analyze of a one-record file (baseline RSS)", Run: analyze(tiny)})
	if err != nil {
		return err
	}
	goal := AtLeast(150)
	note := ""
	if limit != 128<<20 {
		note = fmt.Sprintf("quick run: %d MiB, not 128", limit>>20)
	}
	b.Value("analyze_mb_per_s", float64(size)/1e6/ss[0].MedianWall().Seconds(), "MB/s (10^6 bytes)", fmt.Sprintf("%d bytes of NDJSON", size), arm(ss[0]), goal, note)
	b.Ratio("analyze_vs_sha256sum", ss[0], ss[1], NoGoal, "")
	beyond := float64(ss[0].PeakRSS()-ss[2].PeakRSS()) / (1 << 20)
	b.Value("analyze_rss_beyond_base", beyond, "MiB", "peak RSS minus that of a one-record run", nil, AtMost(64),
		fmt.Sprintf("peak %.1f MiB; with %d distinct requests the key table is small, so all of it counts", float64(ss[0].PeakRSS())/(1<<20), analyzeDistinct))

	if !agent.Has(ctx, "cache-compare") {
		b.Logf("no cache-compare command: its figure is left out")
		return nil
	}
	b.UsesModules("cacheplan")
	prev, cur, err := compareBodies(dir, bodies[4])
	if err != nil {
		return err
	}
	cc, err := measure.Alternate(ctx, b.Reps(30, 10), measure.Arm{Name: "agent-rewind cache-compare (two 1 MiB bodies)", Run: func(ctx context.Context) (measure.Sample, error) {
		r, err := measure.Run(agent.Command(ctx, dir, "--json", "cache-compare", prev, cur))
		return r.Sample, err
	}})
	if err != nil {
		return err
	}
	b.Value("cache_compare_1mib_p50", ms(measure.Percentile(cc[0].Walls(), 50)), "ms", "wall per process, process start included", arm(cc[0]), AtMost(20), "")
	return nil
}

// writeCapture writes records to path until the next would pass limit bytes (at least one),
// and returns the size, the record count and the file's SHA-256.
func writeCapture(path string, limit int64, bodies, usages []map[string]any) (int64, int, string, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, 0, "", err
	}
	h := sha256.New()
	w := bufio.NewWriterSize(io.MultiWriter(f, h), 1<<20)
	var size int64
	n := 0
	for ; ; n++ {
		rec, err := analyzeRecord(n, bodies, usages)
		if err != nil {
			f.Close()
			return 0, 0, "", err
		}
		if n > 0 && size+int64(len(rec))+1 > limit {
			break
		}
		w.Write(rec)
		w.WriteByte('\n')
		size += int64(len(rec)) + 1
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return 0, 0, "", err
	}
	if err := f.Close(); err != nil {
		return 0, 0, "", err
	}
	return size, n, hex.EncodeToString(h.Sum(nil)), nil
}

// compareBodies writes two consecutive request bodies of about 1 MiB: a long conversation, and
// the same conversation with one more turn appended.
func compareBodies(dir string, base map[string]any) (string, string, error) {
	msgs, _ := base["messages"].([]any)
	long := append([]any{}, msgs...)
	filler := strings.Repeat("All tests passed; continuing with the next file. ", 40)
	b, _ := json.Marshal(long)
	size := len(b)
	for i := 0; size < 1<<20-4096; i++ {
		turn := []any{
			map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": fmt.Sprintf("Step %d. %s", i, filler)}}},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": fmt.Sprintf("Continue with step %d.", i+1)}}},
		}
		tb, _ := json.Marshal(turn)
		size += len(tb) // close enough: the brackets of the pair stand in for the commas joining it
		long = append(long, turn...)
	}
	write := func(name string, messages []any) (string, error) {
		body := map[string]any{}
		for k, v := range base {
			body[k] = v
		}
		body["messages"] = messages
		b, err := json.Marshal(body)
		if err != nil {
			return "", err
		}
		p := filepath.Join(dir, name)
		return p, os.WriteFile(p, b, 0o644)
	}
	prev, err := write("previous.json", long)
	if err != nil {
		return "", "", err
	}
	cur, err := write("current.json", append(long[:len(long):len(long)],
		map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": "Done."}}},
		map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "Thanks."}}}))
	return prev, cur, err
}
