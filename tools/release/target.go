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
var Targets = []Target{{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "amd64"}, {"darwin", "arm64"}, {"windows", "amd64"}, {"windows", "arm64"}}

func (t Target) String() string { return t.OS + "/" + t.Arch }

// Exe is the suffix of a program's file name on t: Windows runs only files named .exe by name.
func (t Target) Exe() string {
	if t.OS == "windows" {
		return ".exe"
	}
	return ""
}

// NPMPlatform is the platform as node names it (process.platform-process.arch): amd64 is x64,
// windows is win32.
func (t Target) NPMPlatform() string {
	return t.NPMOS() + "-" + t.NPMCPU()
}

// NPMOS is t's system as node's process.platform and package.json's "os" name it.
func (t Target) NPMOS() string {
	if t.OS == "windows" {
		return "win32"
	}
	return t.OS
}

// NPMCPU is t's architecture as node's process.arch and package.json's "cpu" name it.
func (t Target) NPMCPU() string {
	if t.Arch == "amd64" {
		return "x64"
	}
	return t.Arch
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
			return nil, fmt.Errorf("target %q is not a release target: use one of %v, \"all\" or \"host\"", f, Targets)
		}
		out = append(out, t)
	}
	return out, nil
}
