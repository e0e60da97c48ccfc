package hookwire

import "runtime/debug"

// version and commit are stamped at link time by the release tool (tools/release), in both
// binaries (each links this package):
//
//	-ldflags "-X github.com/agent-rewind/rewind/cli/internal/hookwire.version=v0.3.0 -X ...hookwire.commit=<sha>"
//
// A source build leaves them empty.
var version, commit = "", ""

// Stamp returns the release version and commit stamped at link time ("" in a source build).
func Stamp() (v, c string) { return version, commit }

// Version is what a request carries and the server compares with its own: a client and a
// server of different builds never serve each other (the server exits, an upgrade replaces it).
// Unstamped, it is the module version the go command recorded (go install ...@v0.1.0 gives both
// binaries v0.1.0, as "agent-rewind version" says), else "devel".
func Version() string {
	if version != "" {
		return version + " " + commit
	}
	return Release()
}

// Release is the release this binary is: the stamped version, else the module version the go
// command recorded, else "devel".
func Release() string {
	if version != "" {
		return version
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
