package command

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version is set at link time: go build -ldflags "-X github.com/agent-rewind/rewind/cli/internal/command.version=v1.2.3".
var version = ""

// VersionCmd prints the version.
type VersionCmd struct{}

// VersionInfo is the --json shape of "agent-rewind version".
type VersionInfo struct {
	Version string `json:"version"`          // release version, or "devel" for a source build
	Commit  string `json:"commit,omitempty"` // VCS revision, when the build recorded it
	Go      string `json:"go"`               // toolchain that built the binary
	OS      string `json:"os"`
	Arch    string `json:"arch"`
}

// Run prints the version.
func (VersionCmd) Run(env *Env) error {
	info := VersionInfo{Version: version, Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if info.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			info.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				info.Commit = s.Value
			}
		}
	}
	if info.Version == "" {
		info.Version = "devel"
	}
	return env.Emit(info, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "agent-rewind %s (%s, %s/%s)\n", info.Version, info.Go, info.OS, info.Arch)
		return err
	})
}
