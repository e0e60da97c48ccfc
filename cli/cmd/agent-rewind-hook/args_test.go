//go:build !windows

// Not on Windows yet: cli/internal/hook imports the snapshot store, which does not build there.

package main

import (
	"testing"

	"github.com/agent-rewind/rewind/cli/internal/hook"
)

// TestInputArgAgreesWithParseArgs: the client reads standard input exactly when the guard would
// (hook.ParseArgs takes no JSON argument). Reading it when the input is an argument could hang
// on a standard input nobody closes; not reading it when the guard needs it makes every call
// fall back. Every command line of up to four words from the guard's vocabulary is tried.
func TestInputArgAgreesWithParseArgs(t *testing.T) {
	words := []string{"guard", "--json", "--checkpoint", "--workspace", "--workspace=/w", "--workspace=",
		"--state-dir", "--state-dir=/s", "/w", "{}", `{"key":"k"}`, "", "-x", "~/w"}
	var try func(args []string)
	try = func(args []string) {
		if c, _, ok := hook.ParseArgs(args, "/wd"); ok {
			if got, want := inputArg(args), c.Input != ""; got != want {
				t.Errorf("%q: inputArg %v, but the guard takes input %q", args, got, c.Input)
			}
		}
		if len(args) == 4 {
			return
		}
		for _, w := range words {
			try(append(args[:len(args):len(args)], w))
		}
	}
	try(nil)
}
