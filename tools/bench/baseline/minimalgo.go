package baseline

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/agent-rewind/rewind/tools/bench/measure"
)

// MinimalGo is a Go program that does nothing, built like agent-rewind (go build -trimpath):
// the floor of any Go process's whole run, start-up of the runtime included, which a hook
// written in Go cannot go below.
type MinimalGo struct {
	Path string
}

// BuildMinimalGo builds the program in dir (a scratch folder of its own).
func BuildMinimalGo(ctx context.Context, dir string) (*MinimalGo, error) {
	files := map[string]string{
		"go.mod":  "module minimal\n\ngo 1.22\n",
		"main.go": "package main\n\nfunc main() {}\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return nil, err
		}
	}
	path := filepath.Join(dir, "minimal")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", path, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("build the minimal Go program: %v: %s", err, strings.TrimSpace(errb.String()))
	}
	return &MinimalGo{Path: path}, nil
}

// Run runs the program once and reports its wall time and peak RSS.
func (m *MinimalGo) Run(ctx context.Context) (measure.Sample, error) {
	r, err := measure.Run(exec.CommandContext(ctx, m.Path))
	return r.Sample, err
}
