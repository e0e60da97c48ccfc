// Command agent-rewind-hook is agent-rewind's guard alone, for agents' hooks: the same
// command line (hook.Usage), input, output, exit codes and chain records as "agent-rewind
// guard", in a binary that links none of the MCP server, the gateway, PostgreSQL or the
// command-line library, so that the process an agent starts before and after every tool call
// costs little more than starting any Go program. Every other command is agent-rewind's.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/agent-rewind/rewind/cli/internal/hook"
	"github.com/agent-rewind/rewind/cli/internal/watch"
	"github.com/agent-rewind/rewind/cli/internal/workspace"
)

func main() {
	hook.TuneGC()
	call, stateDir, ok := hook.ParseArgs(os.Args[1:])
	if !ok {
		version, _ := hook.Stamp()
		if version == "" {
			version = "devel"
		}
		fmt.Fprintf(os.Stderr, "agent-rewind-hook %s: usage: agent-rewind-hook %s\n"+
			"It runs only the guard, as agents' hooks call it (got %q); for everything else, and for --help, run agent-rewind.\n",
			version, hook.Usage, os.Args[1:])
		os.Exit(2)
	}
	if stateDir != "" {
		os.Setenv(workspace.StateDirEnv, stateDir) // as agent-rewind does: its children read it too
	}
	watch.Program = mainProgram
	os.Exit(hook.Guard(call, os.Stdin, os.Stdout, os.Stderr))
}

// mainProgram finds agent-rewind, which runs the change watcher and a large first checkpoint:
// beside this binary (release archives, the npm package and the plugin put them together),
// else on PATH.
func mainProgram() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	beside := filepath.Join(filepath.Dir(exe), "agent-rewind")
	if st, err := os.Stat(beside); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
		return beside, nil
	}
	if p, err := exec.LookPath("agent-rewind"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("agent-rewind is neither beside %s nor on PATH: install agent-rewind with agent-rewind-hook", exe)
}
