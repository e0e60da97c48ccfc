// Command agent-rewind gives coding agents whole-workspace checkpoint and rewind, a
// refuse-and-record barrier for external effects, and a tamper-evident hash chain over both.
//
// Run "agent-rewind --help" for the commands; the README and docs/ document them.
package main

import (
	"os"

	"github.com/agent-rewind/rewind/cli/internal/command"
	"github.com/agent-rewind/rewind/cli/internal/hook"
)

func main() {
	hook.TuneGC()
	os.Exit(command.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
