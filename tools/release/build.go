package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agent-rewind/rewind/internal/durable"
	"golang.org/x/mod/semver"
)

// versionPkg is the package whose version and commit variables the link stamps: both binaries
// link it.
const versionPkg = "github.com/agent-rewind/rewind/cli/internal/hookwire"

// Binaries are the two programs a release builds for a target: agent-rewind, and
// agent-rewind-hook, the guard alone for agents' hooks (cli/cmd/agent-rewind-hook).
type Binaries struct {
	Main, Hook string // paths
}

// Options is one release run.
type Options struct {
	Root    string   // repository root: holds go.work, cli/ and npm/
	Out     string   // folder the artifacts are written to
	Version string   // Go release version, vMAJOR.MINOR.PATCH[-PRERELEASE]
	Commit  string   // commit stamped into the binaries
	Targets []Target // platforms to build
	Log     io.Writer
}

// CheckVersion accepts a canonical semantic version with the leading v Go module tags use.
func CheckVersion(v string) error {
	if !semver.IsValid(v) || semver.Canonical(v) != v {
		return fmt.Errorf("version %q is not a release version: give it as vMAJOR.MINOR.PATCH, for example v0.3.0 or v0.3.0-rc.1 (no build metadata)", v)
	}
	return nil
}

// BinaryName is the file name of the release binary for t.
func BinaryName(version string, t Target) string {
	return "agent-rewind-" + version + "-" + t.OS + "-" + t.Arch
}

// HookBinaryName is the file name of the release's hook binary for t.
func HookBinaryName(version string, t Target) string {
	return "agent-rewind-hook-" + version + "-" + t.OS + "-" + t.Arch
}

// Build builds both binaries of every target into o.Out and writes SHA256SUMS beside them. It
// returns each target's binaries.
func Build(ctx context.Context, o Options) (map[Target]Binaries, error) {
	if err := CheckVersion(o.Version); err != nil {
		return nil, err
	}
	if o.Commit == "" {
		return nil, errors.New("no commit to stamp: pass -commit or run in a git checkout")
	}
	// go build runs in cli/: a relative -o would land there, beside a SHA256SUMS of this folder.
	out, err := filepath.Abs(o.Out)
	if err != nil {
		return nil, err
	}
	o.Out = out
	if err := clearOut(o.Out, o.Log); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, err
	}
	bins := map[Target]Binaries{}
	var names []string
	build := func(t Target, name, pkg string) (string, error) {
		out := filepath.Join(o.Out, name)
		fmt.Fprintf(o.Log, "release: building %s\n", name)
		ldflags := fmt.Sprintf("-s -w -X %s.version=%s -X %s.commit=%s", versionPkg, o.Version, versionPkg, o.Commit)
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", out, pkg)
		cmd.Dir = filepath.Join(o.Root, "cli")
		// Everything that shapes the bytes is fixed here, not taken from the caller's environment.
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+t.OS, "GOARCH="+t.Arch, "GOAMD64=v1", "GOARM64=v8.0",
			"GOFLAGS=", "GOEXPERIMENT=", "GOWORK="+filepath.Join(o.Root, "go.work"))
		if b, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("go build %s %s: %v\n%s", pkg, t, err, b)
		}
		if err := syncFile(out); err != nil { // on disk before SHA256SUMS says it is
			return "", err
		}
		names = append(names, name)
		return out, nil
	}
	for _, t := range o.Targets {
		main, err := build(t, BinaryName(o.Version, t), "./cmd/agent-rewind")
		if err != nil {
			return nil, err
		}
		hook, err := build(t, HookBinaryName(o.Version, t), "./cmd/agent-rewind-hook")
		if err != nil {
			return nil, err
		}
		bins[t] = Binaries{Main: main, Hook: hook}
	}
	slices.Sort(names)
	var sums strings.Builder
	for _, name := range names {
		sum, err := fileSHA256(filepath.Join(o.Out, name))
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&sums, "%s  %s\n", sum, name) // the format sha256sum --check reads
	}
	return bins, durable.WriteFile(filepath.Join(o.Out, "SHA256SUMS"), []byte(sums.String()), 0o644)
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return fmt.Sprintf("%x", h.Sum(nil)), nil
}

// syncFile flushes a file go build wrote to the disk.
func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	return nil
}
