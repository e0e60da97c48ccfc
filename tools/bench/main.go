package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agent-rewind/rewind/tools/bench/baseline"
	"github.com/agent-rewind/rewind/tools/bench/workspace"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Main runs the bench command with args and returns the exit code: 0 when every suite run was
// ok or skipped, 1 when one failed or the run could not start, 2 for a usage error.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "gen":
			return genMain(ctx, args[1:], stdout, stderr)
		case "statwalk":
			return statwalkMain(args[1:], stdout, stderr)
		case "mock":
			return mockMain(args[1:], os.Stdin, stdout, stderr)
		case "proxy":
			return proxyMain(args[1:], os.Stdin, stdout, stderr)
		case "relay":
			return relayMain(args[1:], os.Stdin, stdout, stderr)
		}
	}
	return benchMain(ctx, args, stdout, stderr)
}

// stringsFlag is a repeatable string flag.
type stringsFlag []string

func (s *stringsFlag) String() string { return strings.Join(*s, ",") }
func (s *stringsFlag) Set(v string) error {
	for _, x := range strings.Split(v, ",") {
		if x = strings.TrimSpace(x); x != "" {
			*s = append(*s, x)
		}
	}
	return nil
}

func benchMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		quick  = fs.Bool("quick", false, "a short run (small workspace, few repetitions): under 2 minutes")
		suites stringsFlag
		out    = fs.String("out", "", "where to write the JSON artifact (default bench-<UTC time>.json in the current directory)")
		list   = fs.Bool("list", false, "list the suites and exit")
		files  = fs.Int("files", 0, "files in the snapshot workspace (default 50000, or 5000 with --quick)")
		bytes  = fs.Int64("bytes", 0, "bytes in the snapshot workspace (default files × 28000, or 100 MiB with --quick)")
		seed   = fs.Uint64("seed", 1, "seed of the generated workspace")
		tmp    = fs.String("tmp", "", "scratch directory for generated workspaces and stores (default the system temp dir)")
		keep   = fs.Bool("keep", false, "keep the scratch directory after the run (its path is printed)")
		agentF = fs.String("agent", "", "measure this agent-rewind binary instead of building ./cli/cmd/agent-rewind (the artifact's sources then describe the checkout, not the binary)")
	)
	fs.Var(&suites, "suite", "run only this suite (repeatable, or comma-separated)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: go run ./tools/bench [--quick] [--suite NAME ...] [--out FILE] [--list]\n"+
			"       go run ./tools/bench gen --files N [--bytes B] [--seed S] --dir DIR\n\nflags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "bench: unexpected argument %q (subcommands: gen; see -h)\n", fs.Arg(0))
		return 2
	}
	if *list {
		for _, s := range registry {
			fmt.Fprintf(stdout, "%-18s %s\n", s.Name, s.Description)
		}
		return 0
	}
	chosen, err := selectSuites(suites)
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 2
	}

	shape := workspace.Full
	if *quick {
		shape = workspace.Quick
	}
	if *files > 0 {
		shape.Files = *files
		shape.Bytes = int64(*files) * workspace.BytesPerFile
	}
	if *bytes > 0 {
		shape.Bytes = *bytes
	}
	shape.Seed = *seed
	if err := shape.Validate(); err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 2
	}

	cwd, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	root, err := findRoot(cwd)
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	modules, err := workModules(root)
	if err != nil {
		fmt.Fprintf(stderr, "bench: read go.work: %v\n", err)
		return 1
	}
	started := time.Now().UTC()
	if *out == "" {
		*out = filepath.Join(cwd, "bench-"+started.Format("20060102T150405Z")+".json")
	}
	scratch, err := os.MkdirTemp(*tmp, "agent-rewind-bench-")
	if err != nil {
		fmt.Fprintf(stderr, "bench: scratch directory: %v\n", err)
		return 1
	}
	if *keep {
		fmt.Fprintf(stderr, "bench: scratch directory %s is kept\n", scratch)
	} else {
		defer os.RemoveAll(scratch)
	}

	r := &run{
		root: root, tmp: scratch, quick: *quick, shape: shape, modules: modules, log: stderr, agentPath: *agentF,
		used: map[string]bool{"tools": true}, spaces: map[workspace.Shape]generated{},
	}
	if *agentF != "" {
		if r.agentPath, err = filepath.Abs(*agentF); err != nil {
			fmt.Fprintf(stderr, "bench: --agent: %v\n", err)
			return 2
		}
	}
	art := Artifact{
		Schema: SchemaVersion, Tool: "agent-rewind bench (go run ./tools/bench)",
		Started: started, Args: args, Quick: *quick,
		Machine: readMachine(), Git: readGit(ctx, root),
	}
	failed := false
	for _, s := range chosen {
		res := runSuite(ctx, r, s)
		failed = failed || res.Status == StatusFailed
		art.Suites = append(art.Suites, res)
	}
	art.Ended = time.Now().UTC()
	if r.agent != nil {
		sum, _, err := fileSHA256(r.agent.Path)
		if err != nil {
			fmt.Fprintf(stderr, "bench: hash the agent-rewind binary: %v\n", err)
			return 1
		}
		art.Agent = &AgentBinary{Built: r.agentPath == "", SHA256: sum}
		if r.agentPath != "" {
			art.Agent.Path = r.agentPath
		}
	}
	art.Inputs = r.inputs
	if art.Inputs == nil {
		art.Inputs = []Input{}
	}
	if art.Sources, err = hashSources(root, r.used); err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	if err := writeJSON(*out, art); err != nil {
		fmt.Fprintf(stderr, "bench: write the artifact: %v\n", err)
		return 1
	}
	printSummary(stdout, art)
	fmt.Fprintf(stdout, "\nartifact: %s\n", *out)
	if failed {
		return 1
	}
	return 0
}

// runSuite runs one suite and returns its result; a panic inside a suite fails that suite only.
func runSuite(ctx context.Context, r *run, s Suite) (res SuiteResult) {
	res = SuiteResult{Name: s.Name, Description: s.Description, Modules: []string{}, Figures: []Figure{}}
	start := time.Now()
	defer func() {
		if p := recover(); p != nil {
			res.Status, res.Reason = StatusFailed, fmt.Sprintf("panic: %v", p)
		}
		res.Seconds = roundSig(time.Since(start).Seconds(), 3)
		fmt.Fprintf(r.log, "bench: %s: %s %s\n", s.Name, res.Status, res.Reason)
	}()
	for _, m := range s.Modules {
		if !slices.Contains(r.modules, m) {
			res.Status, res.Reason = StatusSkipped, fmt.Sprintf("module %s not present yet (not in go.work)", m)
			return res
		}
	}
	if ctx.Err() != nil {
		res.Status, res.Reason = StatusSkipped, "interrupted before it started"
		return res
	}
	fmt.Fprintf(r.log, "bench: %s: running\n", s.Name)
	b := &Bench{Quick: r.quick, run: r, res: &res}
	b.UsesModules(s.Modules...)
	err := s.Run(ctx, b)
	switch {
	case err == nil:
		res.Status = StatusOK
	case errors.Is(err, ErrSkip):
		res.Status, res.Reason = StatusSkipped, err.Error()
		res.Figures = []Figure{} // a skipped suite reports nothing, not half its figures
	default:
		res.Status, res.Reason = StatusFailed, err.Error()
	}
	return res
}

// hashSources hashes the used modules (those present) and the go.work files.
func hashSources(root string, used map[string]bool) ([]Source, error) {
	var mods []string
	for m := range used {
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(m), "go.mod")); err == nil {
			mods = append(mods, m)
		}
	}
	slices.Sort(mods)
	var out []Source
	for _, m := range mods {
		s, err := hashModule(root, m)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	w, err := hashWorkFiles(root)
	if err != nil {
		return nil, err
	}
	return append(out, w), nil
}

// genMain is "bench gen": write a generated workspace and print its description as JSON.
func genMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench gen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	files := fs.Int("files", workspace.Full.Files, "regular files plus symlinks")
	bytes := fs.Int64("bytes", 0, "total bytes of the regular files (default files × 28000)")
	seed := fs.Uint64("seed", 1, "seed: the same files, bytes and seed always make a byte-identical tree")
	dir := fs.String("dir", "", "directory to create the tree in (absent or empty)")
	changes := fs.Int("changes", 0, "instead of generating: make this many changes to the tree at --dir (7 in 10 modified, 2 added, 1 deleted)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *dir == "" {
		fmt.Fprintln(stderr, "bench gen: --dir is required")
		return 2
	}
	var v any
	if *changes > 0 {
		cs, err := workspace.MakeChanges(*dir, *changes, *seed, ".git")
		if err != nil {
			fmt.Fprintf(stderr, "bench gen: %v\n", err)
			return 1
		}
		v = cs
	} else {
		s := workspace.Shape{Files: *files, Bytes: *bytes, Seed: *seed}
		if s.Bytes == 0 {
			s.Bytes = int64(s.Files) * workspace.BytesPerFile
		}
		res, err := workspace.Generate(ctx, *dir, s)
		if err != nil {
			fmt.Fprintf(stderr, "bench gen: %v\n", err)
			return 1
		}
		v = res
	}
	if err := jsonTo(stdout, v); err != nil {
		fmt.Fprintf(stderr, "bench gen: %v\n", err)
		return 1
	}
	return 0
}

// statwalkMain is the hidden "bench statwalk DIR [SKIP...]": baseline.StatWalk in its own
// process, printing the number of entries it saw, so that it is timed as the commands it is
// compared with are (process start included).
func statwalkMain(args []string, stdout, stderr io.Writer) int {
	if len(args) < 1 {
		fmt.Fprintln(stderr, "usage: bench statwalk DIR [SKIP-NAME...]")
		return 2
	}
	n, err := baseline.StatWalk(args[0], args[1:]...)
	if err != nil {
		fmt.Fprintf(stderr, "bench statwalk: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, strconv.Itoa(n))
	return 0
}
