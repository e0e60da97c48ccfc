package command

import "github.com/alecthomas/kong"

// HelpCmd prints the help of the whole program or of one command: "agent-rewind help chain
// verify" is "agent-rewind chain verify --help", the form CLI users try first.
type HelpCmd struct {
	Command []string `arg:"" optional:"" help:"The command, with its subcommands (for example: chain verify)." complete:"commands"`
}

// Run parses the command words with --help in a model of the whole command tree: kong prints that
// command's help (or, for a word that names no command, the error with a suggestion) and exits
// through Main's exitPanic.
func (h HelpCmd) Run(env *Env) error {
	var cli CLI
	parser, err := kong.New(&cli, kongOptions(env)...)
	if err != nil {
		return err
	}
	_, err = parser.Parse(append(append([]string{}, h.Command...), "--help"))
	parser.FatalIfErrorf(err)
	return nil
}
