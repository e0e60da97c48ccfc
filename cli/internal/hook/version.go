package hook

// version and commit are stamped at link time by the release tool (tools/release), in both
// binaries (each links this package):
//
//	-ldflags "-X github.com/agent-rewind/rewind/cli/internal/hook.version=v0.3.0 -X ...hook.commit=<sha>"
//
// A source build leaves them empty.
var version, commit = "", ""

// Stamp returns the release version and commit stamped at link time ("" in a source build).
func Stamp() (v, c string) { return version, commit }
