//go:build unix

package statebase_test

import (
	"fmt"

	"github.com/agent-rewind/rewind/cli/internal/statebase"
)

// The state base comes from the environment alone: here a map stands for it.
func Example() {
	env := map[string]string{"HOME": "/home/ada", "XDG_STATE_HOME": "/var/state/ada"}
	dir, err := statebase.Dir(func(k string) string { return env[k] })
	fmt.Println(dir, err)

	env[statebase.Env] = "/srv/rewind" // --state-dir, or REWIND_STATE_DIR, wins
	dir, _ = statebase.Dir(func(k string) string { return env[k] })
	fmt.Println(dir)
	// Output:
	// /var/state/ada/agent-rewind <nil>
	// /srv/rewind
}
