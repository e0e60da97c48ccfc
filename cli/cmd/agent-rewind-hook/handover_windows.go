package main

import (
	"os"
	"strconv"

	"github.com/agent-rewind/rewind/cli/internal/hookwire"
)

// handOver runs "agent-rewind args...", the whole guard, with ClientEnv set to mode, and exits
// with its exit code: Windows has no exec, so this process waits for it, its standard output
// and error the guard's own. When stdin was read, the guard gets what was read as its standard
// input, through a pipe written while it runs.
func handOver(args []string, input []byte, read bool, mode string) {
	exe, err := agentRewind()
	if err != nil {
		failClosed(err.Error())
	}
	in := os.Stdin
	var w *os.File
	if read {
		if in, w, err = os.Pipe(); err != nil {
			failClosed("cannot hand standard input to agent-rewind: " + err.Error())
		}
	}
	env := append(os.Environ(), hookwire.ClientEnv+"="+mode)
	p, err := os.StartProcess(exe, append([]string{exe}, args...), &os.ProcAttr{Env: env, Files: []*os.File{in, os.Stdout, os.Stderr}})
	if err != nil {
		failClosed("cannot run " + exe + ": " + err.Error())
	}
	if read {
		in.Close()
		// A guard that exits without reading all of it closes the pipe: the write then
		// fails, and its exit code is what counts.
		w.Write(input)
		w.Close()
	}
	st, err := p.Wait()
	if err != nil {
		failClosed("cannot wait for " + exe + ": " + err.Error())
	}
	if !st.Exited() {
		failClosed(exe + " ended without an exit code: " + strconv.Itoa(st.ExitCode()))
	}
	os.Exit(st.ExitCode())
}
