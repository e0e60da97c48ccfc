//go:build unix

package main

import (
	"os"
	"syscall"

	"github.com/agent-rewind/rewind/cli/internal/hookwire"
)

// handOver becomes "agent-rewind args..." (execve: the same process), the whole guard, with ClientEnv set to mode. When
// stdin was read, the guard gets what was read as its standard input.
func handOver(args []string, stdin []byte, read bool, mode string) {
	exe, err := agentRewind()
	if err != nil {
		failClosed(err.Error())
	}
	if read {
		if err := giveBack(stdin); err != nil {
			failClosed("cannot hand standard input to agent-rewind: " + err.Error())
		}
	}
	env := append(os.Environ(), hookwire.ClientEnv+"="+mode)
	err = syscall.Exec(exe, append([]string{exe}, args...), env)
	failClosed("cannot run " + exe + ": " + err.Error())
}
