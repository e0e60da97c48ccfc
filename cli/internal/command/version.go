package command

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/agent-rewind/rewind/cli/internal/hook"
)

// VersionCmd prints the version.
type VersionCmd struct{}

// VersionInfo is the --json shape of "agent-rewind version".
type VersionInfo struct {
	Version  string `json:"version"`            // release version, or "devel" for a source build
	Commit   string `json:"commit,omitempty"`   // VCS revision, when the build recorded it
	Modified bool   `json:"modified,omitempty"` // a source build from a checkout with uncommitted changes
	Go       string `json:"go"`                 // toolchain that built the binary
	OS       string `json:"os"`
	Arch     string `json:"arch"`
}

// Run prints the version.
func (VersionCmd) Run(env *Env) error {
	info := versionInfo()
	return env.Emit(info, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "agent-rewind %s (%s; %s, %s/%s)\n", info.Version, buildKind(info), info.Go, info.OS, info.Arch)
		return err
	})
}

// versionInfo is what this binary knows about its own build: the stamped release if there is
// one, else the module version (go install ...@vX) or "devel", with the checkout's commit.
func versionInfo() VersionInfo {
	version, commit := hook.Stamp()
	info := VersionInfo{Version: version, Commit: commit, Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if info.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			info.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && info.Commit == "":
				info.Commit = s.Value
			case s.Key == "vcs.modified" && commit == "":
				info.Modified = s.Value == "true"
			}
		}
	}
	if info.Version == "" {
		info.Version = "devel"
	}
	return info
}

// buildKind says in words which kind of build this is, for the text output.
func buildKind(info VersionInfo) string {
	switch {
	case info.Version != "devel" && info.Commit != "":
		return "release, commit " + info.Commit
	case info.Version != "devel":
		return "release"
	case info.Commit == "":
		// go build records the commit only in a git clone (not a git worktree, not a copy).
		return "development build, commit not recorded"
	case info.Modified:
		return "development build from commit " + info.Commit + " with uncommitted changes"
	default:
		return "development build from commit " + info.Commit
	}
}
