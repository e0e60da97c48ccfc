package statebase_test

import (
	"fmt"

	"github.com/agent-rewind/rewind/cli/internal/statebase"
)

// On Windows the state base is in the user's local application data; here a map stands for
// the environment.
func Example() {
	env := map[string]string{"LOCALAPPDATA": `C:\Users\ada\AppData\Local`, "HOME": `C:\Users\ada`}
	dir, err := statebase.Dir(func(k string) string { return env[k] })
	fmt.Println(dir, err)

	env["LOCALAPPDATA"] = `AppData\Local` // relative: not where Windows keeps it
	_, err = statebase.Dir(func(k string) string { return env[k] })
	fmt.Println(err == statebase.ErrNoLocalAppData)

	env[statebase.Env] = `D:\rewind` // --state-dir, or REWIND_STATE_DIR, wins
	dir, _ = statebase.Dir(func(k string) string { return env[k] })
	fmt.Println(dir)
	// Output:
	// C:\Users\ada\AppData\Local\agent-rewind <nil>
	// true
	// D:\rewind
}
