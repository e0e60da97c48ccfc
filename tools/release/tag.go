package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// TagOptions is one run of the tag step.
type TagOptions struct {
	Root    string // repository root, a clean git checkout
	Version string // the lockstep version every module is released at
	DryRun  bool   // check and print the plan, change nothing
	Proxy   string // folder for the file proxy the release's tidy reads siblings from; empty: a temporary one
	NoVet   bool   // skip go vet work (tests only: it is the slow check)
	Log     io.Writer
}

// Tag releases every module of the workspace at one version: it checks the tree (clean,
// gofmt, tidy, go vet), makes each go.mod require its siblings at the version with no replace
// directives, records their checksums in go.sum with go mod tidy against a file proxy of the
// modules already done (dependency order), commits, and creates one tag per module, deps first.
// Pushing the commit and the tags is left to a maintainer.
func Tag(ctx context.Context, o TagOptions) ([]string, error) {
	if err := CheckVersion(o.Version); err != nil {
		return nil, err
	}
	mods, err := LoadModules(o.Root)
	if err != nil {
		return nil, err
	}
	git := func(args ...string) (string, error) {
		out, err := exec.CommandContext(ctx, "git", append([]string{"-C", o.Root}, args...)...).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out), nil
	}
	if st, err := git("status", "--porcelain"); err != nil {
		return nil, err
	} else if st != "" {
		return nil, fmt.Errorf("the checkout %s has uncommitted changes; commit or stash them before tagging:\n%s", o.Root, st)
	}
	var tags []string
	for _, m := range mods {
		tag := m.TagName(o.Version)
		if out, _ := git("tag", "--list", tag); strings.TrimSpace(out) != "" {
			return nil, fmt.Errorf("tag %s already exists: pick a new version (tags are never moved)", tag)
		}
		tags = append(tags, tag)
	}
	if err := checkTree(ctx, o); err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Log, "release %s: tags in dependency order:\n  %s\n", o.Version, strings.Join(tags, "\n  "))
	if o.DryRun {
		fmt.Fprintln(o.Log, "dry run: nothing changed")
		return tags, nil
	}
	if o.Proxy == "" {
		if o.Proxy, err = os.MkdirTemp("", "release-proxy-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(o.Proxy)
	}
	upstream, err := exec.CommandContext(ctx, "go", "env", "GOPROXY").Output()
	if err != nil {
		return nil, fmt.Errorf("go env GOPROXY: %v", err)
	}
	if err := SetWorkReplaces(o.Root, mods, o.Version); err != nil {
		return nil, err
	}
	if _, err := git("add", "--", "go.work"); err != nil {
		return nil, err
	}
	env := ConsumerEnv(o.Proxy, strings.TrimSpace(string(upstream)))
	for _, m := range mods {
		if err := SetSiblingVersions(o.Root, m.Dir, o.Version); err != nil {
			return nil, err
		}
		tidy := exec.CommandContext(ctx, "go", "mod", "tidy")
		tidy.Dir = filepath.Join(o.Root, filepath.FromSlash(m.Dir))
		tidy.Env = env
		if out, err := tidy.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go mod tidy in %s against the release's proxy: %v\n%s", m.Dir, err, out)
		}
		add := []string{"add", "--", m.Dir + "/go.mod"}
		if fileExists(filepath.Join(tidy.Dir, "go.sum")) {
			add = append(add, m.Dir+"/go.sum")
		}
		if _, err := git(add...); err != nil {
			return nil, err
		}
		if err := AddToProxy(ctx, o.Root, o.Proxy, m, o.Version); err != nil {
			return nil, err
		}
	}
	if st, _ := git("status", "--porcelain"); st != "" {
		if _, err := git("commit", "-q", "-m", "release "+o.Version+": every module requires its siblings at "+o.Version); err != nil {
			return nil, err
		}
	}
	for _, tag := range tags {
		if _, err := git("tag", "-a", tag, "-m", "agent-rewind "+o.Version); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(o.Log, "tagged %d modules at %s; push with: git push origin HEAD %s\n", len(tags), o.Version, strings.Join(tags, " "))
	return tags, nil
}

// ConsumerEnv is the environment of a go command that sees our modules only through the file
// proxy at proxyDir, as a consumer of a release would, and everything else through upstream.
// Our modules are not in the checksum database until published, so it is not asked for them.
func ConsumerEnv(proxyDir, upstream string) []string {
	if upstream == "" || upstream == "off" {
		upstream = "https://proxy.golang.org,direct"
	}
	return append(os.Environ(),
		"GOWORK=off",
		"GOFLAGS=-mod=mod",
		"GOPROXY=file://"+filepath.ToSlash(proxyDir)+","+upstream,
		"GONOSUMDB="+strings.TrimSuffix(modulePrefix, "/"),
		"GOPRIVATE=",
	)
}

// checkTree runs the checks CI runs that are quick enough here: gofmt, go mod tidy, go vet.
func checkTree(ctx context.Context, o TagOptions) error {
	out, err := exec.CommandContext(ctx, "git", "-C", o.Root, "ls-files", "-z", "*.go").Output()
	if err != nil {
		return fmt.Errorf("git ls-files: %v", err)
	}
	files := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	fmtCmd := exec.CommandContext(ctx, "gofmt", append([]string{"-l"}, files...)...)
	fmtCmd.Dir = o.Root
	if b, err := fmtCmd.CombinedOutput(); err != nil || len(b) > 0 {
		return fmt.Errorf("gofmt would change these files (run gofmt -w on them): %v\n%s", err, b)
	}
	if err := CheckTidy(ctx, o.Root); err != nil {
		return err
	}
	if o.NoVet {
		return nil
	}
	vet := exec.CommandContext(ctx, "go", "vet", "work")
	vet.Dir = o.Root
	if b, err := vet.CombinedOutput(); err != nil {
		return fmt.Errorf("go vet work: %v\n%s", err, b)
	}
	return nil
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}
