package agents

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// Binaries are the programs the harness builds from this checkout, once per test binary: what
// a user installs (agent-rewind and agent-rewind-hook, side by side as the releases place them)
// and the effect MCP server the scripts call (shop).
type Binaries struct {
	Dir    string // agent-rewind and agent-rewind-hook, the folder a user has on PATH
	Rewind string // Dir/agent-rewind
	Hook   string // Dir/agent-rewind-hook
	Shop   string // the shop MCP server (in a folder of its own: it is no part of the install)
}

var (
	buildOnce sync.Once
	built     Binaries
	buildErr  error
	buildRoot string // the temporary folder the binaries are in, removed by Cleanup
)

// Build builds the binaries the first time it is called and returns them. They are built as
// the release builds them (static, -trimpath) and without -race: the clients start the hook
// once or twice per tool call, and a -race binary starts several times slower.
func Build() (Binaries, error) {
	buildOnce.Do(func() {
		root, err := RepoRoot()
		if err != nil {
			buildErr = err
			return
		}
		if buildRoot, err = os.MkdirTemp("", "agents-bin-"); err != nil {
			buildErr = err
			return
		}
		b := Binaries{Dir: filepath.Join(buildRoot, "bin")}
		b.Rewind, b.Hook = filepath.Join(b.Dir, "agent-rewind"), filepath.Join(b.Dir, "agent-rewind-hook")
		b.Shop = filepath.Join(buildRoot, "shop", "shop")
		for _, job := range []struct{ out, pkgs string }{
			{b.Dir, "./cli/cmd/agent-rewind ./cli/cmd/agent-rewind-hook"},
			{filepath.Dir(b.Shop), "./tools/agents/shop"},
		} {
			args := append([]string{"build", "-trimpath", "-o", job.out + string(filepath.Separator)}, strings.Fields(job.pkgs)...)
			cmd := exec.Command("go", args...)
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
			var errb bytes.Buffer
			cmd.Stderr = &errb
			if err := cmd.Run(); err != nil {
				buildErr = fmt.Errorf("go build %s in %s: %v: %s", job.pkgs, root, err, strings.TrimSpace(errb.String()))
				return
			}
		}
		built = b
	})
	return built, buildErr
}

// Cleanup removes what Build built; TestMain calls it after the tests.
func Cleanup() {
	if buildRoot != "" {
		os.RemoveAll(buildRoot)
	}
}

// RepoRoot returns the folder of the repository's go.work, found from the working directory
// up (tests run in their package's folder).
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			return d, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("agents: no go.work in %s or above it: run the harness from a checkout of the repository", dir)
		}
	}
}
