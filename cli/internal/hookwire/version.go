package hookwire

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
func Version() string {
	if version == "" {
		return "devel"
	}
	return version + " " + commit
}
