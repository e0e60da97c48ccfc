package main

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
)

// Target is one GOOS/GOARCH the release ships a binary for.
type Target struct{ OS, Arch string }

// Targets are the platforms with a release binary, in the order they are built.
var Targets = []Target{{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "amd64"}, {"darwin", "arm64"}}

func (t Target) String() string { return t.OS + "/" + t.Arch }

// NPMPlatform is the platform as node names it (process.platform-process.arch): amd64 is x64.
func (t Target) NPMPlatform() string {
	arch := t.Arch
	if arch == "amd64" {
		arch = "x64"
	}
	return t.OS + "-" + arch
}

// ParseTargets reads a comma-separated list of GOOS/GOARCH, "all" or "host".
func ParseTargets(s string) ([]Target, error) {
	switch s {
	case "", "all":
		return Targets, nil
	case "host":
		s = runtime.GOOS + "/" + runtime.GOARCH
	}
	var out []Target
	for _, f := range strings.Split(s, ",") {
		goos, goarch, _ := strings.Cut(strings.TrimSpace(f), "/")
		t := Target{goos, goarch}
		if !slices.Contains(Targets, t) {
			if goos == "windows" {
				return nil, fmt.Errorf("target %q: agent-rewind does not build for Windows (the snapshot store and the effect ledger need flock and O_NOFOLLOW); Windows users run the linux build inside WSL 2", f)
			}
			return nil, fmt.Errorf("target %q is not a release target: use one of %v, \"all\" or \"host\"", f, Targets)
		}
		out = append(out, t)
	}
	return out, nil
}
