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
// agent-rewind-hook, the guard alone for agents' hooks (cli/cmd/agent-rewind-hook). On Linux and
// macOS each is a release file of its own; on Windows both are in one .zip, as Windows users
// expect a download to come, named agent-rewind.exe and agent-rewind-hook.exe in it.
type Binaries struct {
	Main, Hook string // paths of the binaries (Linux, macOS)
	Archive    string // path of the .zip holding both (Windows)
}

// Read returns the contents of both binaries for t, from the archive where there is one.
func (b Binaries) Read(t Target) (main, hook []byte, err error) {
	if b.Archive != "" {
		if main, err = readZip(b.Archive, ProgramName("agent-rewind", t)); err != nil {
			return nil, nil, err
		}
		hook, err = readZip(b.Archive, ProgramName("agent-rewind-hook", t))
		return main, hook, err
	}
	if main, err = os.ReadFile(b.Main); err != nil {
		return nil, nil, err
	}
	hook, err = os.ReadFile(b.Hook)
	return main, hook, err
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

// BinaryName is the file name of the release binary for t (Linux, macOS).
func BinaryName(version string, t Target) string {
	return "agent-rewind-" + version + "-" + t.OS + "-" + t.Arch
}

// HookBinaryName is the file name of the release's hook binary for t (Linux, macOS).
func HookBinaryName(version string, t Target) string {
	return "agent-rewind-hook-" + version + "-" + t.OS + "-" + t.Arch
}

// ArchiveName is the file name of the .zip holding both binaries for t (Windows).
func ArchiveName(version string, t Target) string {
	return "agent-rewind-" + version + "-" + t.OS + "-" + t.Arch + ".zip"
}

// ProgramName is the name a program is run by on t: name.exe on Windows, name elsewhere.
func ProgramName(name string, t Target) string { return name + t.Exe() }

// Artifacts are the release files for t, as SHA256SUMS lists them: the two binaries, or on
// Windows the .zip that holds them.
func Artifacts(version string, t Target) []string {
	if t.OS == "windows" {
		return []string{ArchiveName(version, t)}
	}
	return []string{BinaryName(version, t), HookBinaryName(version, t)}
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
	build := func(t Target, out, pkg string) error {
		fmt.Fprintf(o.Log, "release: building %s for %s\n", filepath.Base(out), t)
		ldflags := fmt.Sprintf("-s -w -X %s.version=%s -X %s.commit=%s", versionPkg, o.Version, versionPkg, o.Commit)
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", out, pkg)
		cmd.Dir = filepath.Join(o.Root, "cli")
		// Everything that shapes the bytes is fixed here, not taken from the caller's environment.
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+t.OS, "GOARCH="+t.Arch, "GOAMD64=v1", "GOARM64=v8.0",
			"GOFLAGS=", "GOEXPERIMENT=", "GOWORK="+filepath.Join(o.Root, "go.work"))
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s %s: %v\n%s", pkg, t, err, b)
		}
		return syncFile(out) // on disk before SHA256SUMS says it is
	}
	both := func(t Target, main, hook string) error {
		if err := build(t, main, "./cmd/agent-rewind"); err != nil {
			return err
		}
		return build(t, hook, "./cmd/agent-rewind-hook")
	}
	for _, t := range o.Targets {
		if t.OS != "windows" {
			b := Binaries{Main: filepath.Join(o.Out, BinaryName(o.Version, t)), Hook: filepath.Join(o.Out, HookBinaryName(o.Version, t))}
			if err := both(t, b.Main, b.Hook); err != nil {
				return nil, err
			}
			bins[t] = b
		} else {
			// The binaries go into the .zip under the names they are run by; only the .zip is a
			// release file, so they are built outside the output folder.
			tmp, err := os.MkdirTemp("", "agent-rewind-release-")
			if err != nil {
				return nil, err
			}
			defer os.RemoveAll(tmp)
			main, hook := filepath.Join(tmp, ProgramName("agent-rewind", t)), filepath.Join(tmp, ProgramName("agent-rewind-hook", t))
			if err := both(t, main, hook); err != nil {
				return nil, err
			}
			b := Binaries{Archive: filepath.Join(o.Out, ArchiveName(o.Version, t))}
			fmt.Fprintf(o.Log, "release: writing %s\n", b.Archive)
			if err := writeZip(b.Archive, main, hook); err != nil {
				return nil, err
			}
			bins[t] = b
		}
		names = append(names, Artifacts(o.Version, t)...)
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
