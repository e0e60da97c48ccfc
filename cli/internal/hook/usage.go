package hook

import (
	"fmt"
	"io"
)

// Refuse answers a command line ParseArgs declined, as agent-rewind-hook has always answered
// it (served or not): the usage on stderr, exit 2. Every other command is agent-rewind's.
func Refuse(args []string, stderr io.Writer) int {
	// The release, as agent-rewind version names it: stamped, or go install's module version.
	version := Release()
	fmt.Fprintf(stderr, "agent-rewind-hook %s: usage: agent-rewind-hook %s\n"+
		"It runs only the guard, as agents' hooks call it (got %q); for everything else, and for --help, run agent-rewind.\n",
		version, Usage, args)
	return 2
}
