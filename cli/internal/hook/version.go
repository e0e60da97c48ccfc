package hook

import "github.com/agent-rewind/rewind/cli/internal/hookwire"

// Stamp returns the release version and commit stamped at link time ("" in a source build):
// hookwire holds them, since the hook client links it and not this package.
func Stamp() (v, c string) { return hookwire.Stamp() }
