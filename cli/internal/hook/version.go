package hook

import (
	"runtime/debug"

	"github.com/agent-rewind/rewind/cli/internal/hookwire"
)

// Stamp returns the release version and commit stamped at link time ("" in a source build):
// hookwire holds them, since the hook client links it and not this package.
func Stamp() (v, c string) { return hookwire.Stamp() }

// Release is the release this binary is: the stamped version, else the module version the go
// command recorded (go install ...@v0.1.0 gives both binaries v0.1.0), else "devel". It is
// here, not in hookwire, because runtime/debug would make the thin hook client link fmt and
// reflect.
func Release() string {
	if v, _ := hookwire.Stamp(); v != "" {
		return v
	}
	return moduleVersion(debug.ReadBuildInfo())
}

// moduleVersion is the main module's version in a build's info, or "devel" for a build from a
// source tree, which the go command records as "(devel)" or not at all.
func moduleVersion(bi *debug.BuildInfo, ok bool) string {
	if !ok || bi.Main.Version == "" || bi.Main.Version == "(devel)" {
		return "devel"
	}
	return bi.Main.Version
}
