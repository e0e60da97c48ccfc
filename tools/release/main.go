package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
)

const usage = `usage:
  go run ./tools/release build -version vX.Y.Z [-out DIR] [-targets all|host|linux/amd64,...] [-commit SHA] [-allow-dirty]
  go run ./tools/release npm   -version vX.Y.Z [-out DIR] [-targets all|host|linux/amd64,...] [-commit SHA] [-allow-dirty]

  go run ./tools/release tag   -version vX.Y.Z [-dry-run]
  go run ./tools/release proxy -version vX.Y.Z -out DIR
  go run ./tools/release check-tidy
  go run ./tools/release version

build writes the binaries and SHA256SUMS to -out (default: dist/ at the repository root), after
removing what an earlier release left there; npm also writes and packs the npm packages.
tag checks the tree, makes every go.mod require its siblings at the version, commits and tags
each module (hashchain/vX.Y.Z, ...) locally in dependency order; pushing is left to you.
proxy writes the checkout's modules at the version into a file module proxy (GOPROXY=file://DIR).
version prints the version the tree's modules require of each other (go.work's replaces).
check-tidy fails if go mod tidy would change a module, run GOWORK=off against such a proxy.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, log io.Writer) error {
	if len(args) == 0 {
		return errors.New("name a step: build, npm, tag, proxy, check-tidy or version\n" + usage)
	}
	switch args[0] {
	case "build", "npm":
	case "tag", "proxy":
		return runModules(ctx, args, log)
	case "check-tidy", "version":
		root, err := repoRoot()
		if err != nil {
			return err
		}
		if args[0] == "check-tidy" {
			return CheckTidy(ctx, root)
		}
		v, err := TreeVersion(root)
		if err == nil {
			fmt.Fprintln(log, v)
		}
		return err
	default:
		return fmt.Errorf("unknown step %q: name build, npm, tag, proxy, check-tidy or version\n%s", args[0], usage)
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	version := fs.String("version", "", "release version, vX.Y.Z")
	out := fs.String("out", "", "output folder (default: dist at the repository root)")
	targets := fs.String("targets", "all", "all, host, or a comma-separated list of GOOS/GOARCH")
	commit := fs.String("commit", "", "commit to stamp (default: the checkout's HEAD)")
	dirty := fs.Bool("allow-dirty", false, "build from a checkout with uncommitted changes (stamps COMMIT-dirty)")
	if err := fs.Parse(args[1:]); err != nil {
		return fmt.Errorf("%v\n%s", err, usage)
	}
	root, err := repoRoot()
	if err != nil {
		return err
	}
	// The default is the root's dist/, which .gitignore keeps out of git status (a checkout with
	// untracked files is refused); a folder named on the command line is taken from here.
	if *out == "" {
		*out = filepath.Join(root, "dist")
	}
	if *out, err = filepath.Abs(*out); err != nil {
		return err
	}
	o := Options{Root: root, Out: *out, Version: *version, Commit: *commit, Log: log}
	if o.Targets, err = ParseTargets(*targets); err != nil {
		return err
	}
	if err := CheckVersion(o.Version); err != nil {
		return err
	}
	if o.Commit == "" {
		if o.Commit, err = headCommit(ctx, root, *dirty); err != nil {
			return err
		}
	}
	bins, err := Build(ctx, o)
	if err != nil || args[0] == "build" {
		return err
	}
	_, err = Pack(ctx, o, bins)
	return err
}

// repoRoot is the folder of the go.work that the go command uses here: the repository root.
func repoRoot() (string, error) {
	b, err := exec.Command("go", "env", "GOWORK").Output()
	work := strings.TrimSpace(string(b))
	if err != nil || work == "" || work == "off" {
		return "", fmt.Errorf("no go.work found (go env GOWORK = %q, %v): run this inside the agent-rewind checkout", work, err)
	}
	return filepath.Dir(work), nil
}

// headCommit is HEAD of the checkout at root; a checkout with uncommitted changes is refused
// unless allowDirty, and then stamped COMMIT-dirty so the binary does not claim a commit it is not.
func headCommit(ctx context.Context, root string, allowDirty bool) (string, error) {
	head, err := exec.CommandContext(ctx, "git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		return "", fmt.Errorf("git rev-parse HEAD in %s: %v: pass -commit SHA to build outside a git checkout", root, err)
	}
	status, err := exec.CommandContext(ctx, "git", "-C", root, "status", "--porcelain").Output()
	if err != nil {
		return "", fmt.Errorf("git status in %s: %v", root, err)
	}
	c := strings.TrimSpace(string(head))
	if len(status) > 0 {
		if !allowDirty {
			return "", fmt.Errorf("the checkout %s has uncommitted changes; commit them, or pass -allow-dirty to stamp %s-dirty:\n%s", root, c, status)
		}
		c += "-dirty"
	}
	return c, nil
}

// runModules runs the steps about the Go modules: tag and proxy.
func runModules(ctx context.Context, args []string, log io.Writer) error {
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	version := fs.String("version", "", "release version, vX.Y.Z")
	dry := fs.Bool("dry-run", false, "tag: check and print the plan, change nothing")
	out := fs.String("out", "", "proxy: folder to write the file proxy to")
	if err := fs.Parse(args[1:]); err != nil {
		return fmt.Errorf("%v\n%s", err, usage)
	}
	if err := CheckVersion(*version); err != nil {
		return err
	}
	root, err := repoRoot()
	if err != nil {
		return err
	}
	if args[0] == "tag" {
		_, err := Tag(ctx, TagOptions{Root: root, Version: *version, DryRun: *dry, Log: log})
		return err
	}
	if *out == "" {
		return errors.New("proxy: name the folder to write to with -out DIR\n" + usage)
	}
	dst, err := filepath.Abs(*out)
	if err != nil {
		return err
	}
	mods, err := LoadModules(root)
	if err != nil {
		return err
	}
	for _, m := range mods {
		if err := AddToProxy(ctx, root, dst, m, *version); err != nil {
			return err
		}
	}
	return nil
}
