// Command bench is the single home of agent-rewind's performance figures. Run from the
// repository root:
//
//	go run ./tools/bench [--quick] [--suite NAME ...] [--out FILE] [--list]
//	go run ./tools/bench gen --files N [--bytes B] [--seed S] --dir DIR   (the generated workspace)
//	go run ./tools/bench gen --changes 10 --seed S --dir DIR             (ten deterministic changes)
//
// It runs the chosen suites (all by default), prints a table (figure, value, goal, met, and
// what the figure is measured against) and writes a JSON artifact (default
// bench-<UTC time>.json in the current directory). A full run takes under 15 minutes on the
// project's 2-core machine, --quick under 2. Exit status: 0 when every suite run was ok or
// skipped, 1 when one failed, 2 for a usage error.
//
// # Method
//
// Figures are ratios against the real alternative measured in the same run (shadow git, a
// bare stat walk, true(1), sha256sum, the mock upstream called directly, a raw fsync), with
// A and B runs alternated and repeated; each side is summarised by median and spread (min–max
// and interquartile range), a ratio is the ratio of medians, and per-call latencies are p50
// and p99 (package measure). Absolute goals that an issue states (for example "guard at most
// 5 ms") are judged on the median or the named percentile, and always shown with their
// spread. Child processes are measured with their peak RSS from rusage.
//
// The gateway suites' mock upstream runs in a child process of its own ("bench mock", this
// executable again), as a real upstream is another process than its client; "bench proxy" (a
// bare httputil.ReverseProxy) and "bench relay" (a TCP relay) are the floors the SSE first byte
// is also measured through. "bench mock --tls-cert F --tls-key F" serves HTTPS.
//
// # Suites
//
// Each suite is one file, suite_<name>.go, registering a Suite (name, description, the go.work
// modules it measures, Run). A suite whose module is not in go.work is skipped as "module not
// present yet"; a suite whose command the built agent-rewind lacks is skipped naming the
// command. Suites measure the real agent-rewind binary, built once per run from
// ./cli/cmd/agent-rewind (or given with --agent), as a child process; the chain suite also
// needs two function seams (chainBuild, chainAppendDurable) set from a file that imports the
// hashchain module.
//
// # The artifact (schema 1)
//
//	schema, tool, started, ended, args, quick
//	machine   go, os, arch, cpu_model, cpus, gomaxprocs, memory_bytes, load_average
//	git       commit ("unknown" outside a checkout), dirty (null when unknown)
//	agent     built (true: built by this run; false: --agent, with its path), sha256
//	inputs[]  name, kind ("file": path under tools/bench/testdata; "generated": generator and
//	          params), sha256 (the file's, or the generator's listing hash), bytes, suites
//	sources[] module (folder, or "go.work"), sha256 (of the sorted "<sha256>  <path>" lines),
//	          files[] {path, sha256}: every .go file, go.mod and go.sum of every module whose
//	          code produced a figure (all go.work modules when the binary was measured)
//	suites[]  name, description, status ("ok", "skipped", "failed"), reason, seconds,
//	          modules, figures[]
//
// A figure:
//
//	name, value, unit     for example "first_checkpoint", 0.12, "ratio"
//	of                    what it is measured against, or what is counted
//	denominator           counts only: value of denominator, e.g. 3 of 9 calls replayed
//	a, b                  the arms' statistics: label, n, median_ms, min_ms, max_ms, p25_ms,
//	                      p75_ms, peak_rss_mib (a is the measured side, b the denominator)
//	goal, met             the goal ("<= 0.2", ">= 150", "== 3") and whether this run
//	                      met it; both absent for a figure reported for information
//	note                  anything a reader needs to interpret the value
//
// Values are rounded to four significant digits. A value that could not be computed is
// reported as 0 with a note, and never as met.
package main
