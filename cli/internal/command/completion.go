package command

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/alecthomas/kong"
)

// CompletionCmd prints a completion script generated from the command tree itself, so that a new
// command or flag completes without anyone editing a script.
type CompletionCmd struct {
	Shell string `arg:"" enum:"bash,zsh,fish" help:"The shell: bash, zsh or fish. Load it with: source <(agent-rewind completion bash) in ~/.bashrc; source <(agent-rewind completion zsh) in ~/.zshrc; agent-rewind completion fish > ~/.config/fish/completions/agent-rewind.fish."`
}

// Run writes the script for the shell to stdout.
func (c CompletionCmd) Run(env *Env) error {
	var cli CLI
	parser, err := kong.New(&cli, kongOptions(env)...)
	if err != nil {
		return err
	}
	t := completionTable(parser.Model.Node)
	switch c.Shell {
	case "bash":
		return writeBashCompletion(env.Stdout, t, false)
	case "zsh":
		return writeBashCompletion(env.Stdout, t, true)
	default:
		return writeFishCompletion(env.Stdout, t)
	}
}

// complNode is one command of the tree as the scripts see it: its path of command words ("" for
// the program itself, "chain verify"), its subcommands, its flags (with those of every command
// above it, which kong accepts there too) and what its positional arguments take.
type complNode struct {
	path     string
	children []string
	flags    []complFlag
	args     []string // per position: "file", "words a b c", or "" (nothing to offer)
}

// complFlag is one flag: its name with dashes, and what its value takes ("" for a switch).
type complFlag struct {
	name, value string
}

// completionTable flattens kong's model into complNodes, depth first.
func completionTable(root *kong.Node) []complNode {
	var out []complNode
	var walk func(n *kong.Node, path string)
	walk = func(n *kong.Node, path string) {
		c := complNode{path: path}
		for _, ch := range n.Children {
			if ch.Hidden || ch.Type != kong.CommandNode {
				continue
			}
			c.children = append(c.children, ch.Name)
		}
		for _, group := range n.AllFlags(true) {
			for _, f := range group {
				c.flags = append(c.flags, complFlag{"--" + f.Name, valueKind(f.Value, true)})
				if f.Short != 0 {
					c.flags = append(c.flags, complFlag{"-" + string(f.Short), valueKind(f.Value, true)})
				}
			}
		}
		for _, p := range n.Positional {
			k := valueKind(p, false)
			if p.Tag.Get("complete") == "commands" {
				k = "words " + strings.Join(out[0].children, " ") // help: the top-level commands
			}
			c.args = append(c.args, k)
		}
		out = append(out, c)
		for _, ch := range n.Children {
			if !ch.Hidden && ch.Type == kong.CommandNode {
				walk(ch, strings.TrimSpace(path+" "+ch.Name))
			}
		}
	}
	walk(root, "")
	return out
}

// valueKind is what a flag's or argument's value takes: a file name (type:"path" or a complete:"file"
// tag), one of its enum's words, or nothing to offer; "" for a switch.
func valueKind(v *kong.Value, flag bool) string {
	switch {
	case flag && (v.IsBool() || v.IsCounter()):
		return ""
	case v.Enum != "":
		return "words " + strings.Join(v.EnumSlice(), " ")
	case v.Tag.Type == "path" || v.Tag.Type == "existingfile" || v.Tag.Type == "existingdir" || v.Tag.Get("complete") == "file":
		return "file"
	}
	return "any"
}

// caseTable is one lookup function of the scripts: a case over its key, each row a pattern
// and what to print; fail makes any other key an error (the caller then offers nothing).
type caseTable struct {
	name, doc string
	args      int // the key is the first one or the first two arguments, joined by a space
	rows      []caseRow
	fail      bool
}

// caseRow matches key exactly, or with prefix any key that starts with key and a space.
type caseRow struct {
	key, value string
	prefix     bool
}

// caseTables are the scripts' four lookups, from the command tree.
func caseTables(t []complNode) []caseTable {
	children := caseTable{name: "children", doc: "PATH: the subcommands of the command PATH.", args: 1}
	flags := caseTable{name: "flags", doc: "PATH: the flags the command PATH takes.", args: 1}
	values := caseTable{name: "value", doc: "PATH FLAG: what FLAG's value takes (file, words ..., any); fails for a switch.", args: 2, fail: true}
	args := caseTable{name: "arg", doc: "PATH N: what the command's Nth positional argument takes.", args: 2, fail: true}
	for _, n := range t {
		if len(n.children) > 0 {
			children.rows = append(children.rows, caseRow{key: n.path, value: strings.Join(n.children, " ")})
		}
		flags.rows = append(flags.rows, caseRow{key: n.path, value: strings.Join(flagNames(n), " ")})
		for _, f := range n.flags {
			if f.value != "" {
				values.rows = append(values.rows, caseRow{key: n.path + " " + f.name, value: f.value})
			}
		}
		for i, a := range n.args {
			if a != "any" {
				args.rows = append(args.rows, caseRow{key: fmt.Sprintf("%s %d", n.path, i), value: a})
			}
		}
		// A last argument that takes many values (restore's paths) goes on taking them.
		if k := len(n.args); k > 0 && n.args[k-1] == "file" {
			args.rows = append(args.rows, caseRow{key: n.path, value: "file", prefix: true})
		}
	}
	return []caseTable{children, flags, values, args}
}

// writeBashCompletion writes the bash script; for zsh, the same functions under zsh's bash
// compatibility (bashcompinit), which provides complete and compgen.
func writeBashCompletion(w io.Writer, t []complNode, zsh bool) error {
	var b strings.Builder
	if zsh {
		b.WriteString("#compdef agent-rewind\n# zsh completion for agent-rewind: source <(agent-rewind completion zsh)\nautoload -U +X bashcompinit && bashcompinit\n\n")
	} else {
		b.WriteString("# bash completion for agent-rewind: source <(agent-rewind completion bash)\n\n")
	}
	for _, c := range caseTables(t) {
		key := `"$1"`
		if c.args == 2 {
			key = `"$1 $2"`
		}
		fmt.Fprintf(&b, "# _agent_rewind_%s %s\n_agent_rewind_%s() {\n  case %s in\n", c.name, c.doc, c.name, key)
		for _, r := range c.rows {
			pattern := shQuote(r.key)
			if r.prefix {
				pattern = shQuote(r.key+" ") + "*"
			}
			fmt.Fprintf(&b, "    %s) echo %s ;;\n", pattern, shQuote(r.value))
		}
		if c.fail {
			b.WriteString("    *) return 1 ;;\n")
		}
		b.WriteString("  esac\n}\n\n")
	}
	b.WriteString(bashMain)
	_, err := io.WriteString(w, b.String())
	return err
}

// bashMain walks the words before the cursor to the command they name (skipping flags and the
// values of flags that take one), then offers that command's subcommands, flags, a flag's value,
// or what its next positional argument takes.
const bashMain = `_agent_rewind_reply() {
  if [ "$1" = file ]; then
    COMPREPLY=($(compgen -f -- "$2"))
    compopt -o filenames 2>/dev/null
  else
    case "$1" in words\ *) COMPREPLY=($(compgen -W "${1#words }" -- "$2")) ;; esac
  fi
}

_agent_rewind() {
  local cur="${COMP_WORDS[COMP_CWORD]}" path="" n=0 i w kind
  COMPREPLY=()
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="${COMP_WORDS[i]}"
    case "$w" in
      --*=*) ;;
      -*) _agent_rewind_value "$path" "$w" >/dev/null && i=$((i + 1)) ;;
      *)
        if [ "$n" = 0 ] && [[ " $(_agent_rewind_children "$path") " == *" $w "* ]]; then
          path="${path:+$path }$w"
        else
          n=$((n + 1))
        fi ;;
    esac
  done
  w="${COMP_WORDS[COMP_CWORD-1]}"
  if [ "$COMP_CWORD" -gt 1 ] && [[ "$w" == -* ]] && kind=$(_agent_rewind_value "$path" "$w"); then
    _agent_rewind_reply "$kind" "$cur"
    return 0
  fi
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$(_agent_rewind_flags "$path")" -- "$cur"))
    return 0
  fi
  kind=$(_agent_rewind_children "$path")
  if [ -n "$kind" ] && [ "$n" = 0 ]; then
    COMPREPLY=($(compgen -W "$kind" -- "$cur"))
    return 0
  fi
  kind=$(_agent_rewind_arg "$path" "$n") && _agent_rewind_reply "$kind" "$cur"
  return 0
}

complete -F _agent_rewind agent-rewind
`

// writeFishCompletion writes the fish script: the same tables as fish functions, and one
// function that prints the candidates (fish filters them by what is typed).
func writeFishCompletion(w io.Writer, t []complNode) error {
	var b strings.Builder
	b.WriteString("# fish completion for agent-rewind: agent-rewind completion fish > ~/.config/fish/completions/agent-rewind.fish\n\n")
	for _, c := range caseTables(t) {
		key := `"$argv[1]"`
		if c.args == 2 {
			key = `"$argv[1] $argv[2]"`
		}
		fmt.Fprintf(&b, "# __agent_rewind_%s %s\nfunction __agent_rewind_%s\n    switch %s\n", c.name, c.doc, c.name, key)
		for _, r := range c.rows {
			pattern := shQuote(r.key)
			if r.prefix {
				pattern = shQuote(r.key + " *") // fish's case matches * even quoted
			}
			fmt.Fprintf(&b, "        case %s\n            echo %s\n", pattern, shQuote(r.value))
		}
		if c.fail {
			b.WriteString("        case '*'\n            return 1\n")
		}
		b.WriteString("    end\nend\n\n")
	}
	b.WriteString(fishMain)
	_, err := io.WriteString(w, b.String())
	return err
}

// fishMain is bashMain's walk in fish.
const fishMain = `function __agent_rewind_reply
    if test "$argv[1]" = file
        __fish_complete_path $argv[2]
    else if string match -q 'words *' -- $argv[1]
        string split ' ' -- (string replace 'words ' '' -- $argv[1])
    end
end

function __agent_rewind_complete
    set -l words (commandline -opc)
    set -l cur (commandline -ct)
    set -l path ''
    set -l n 0
    set -l skip 0
    for w in $words[2..-1]
        if test $skip = 1
            set skip 0
            continue
        end
        switch $w
            case '--*=*'
            case '-*'
                if __agent_rewind_value "$path" $w >/dev/null
                    set skip 1
                end
            case '*'
                if test $n = 0; and contains -- $w (string split ' ' -- (__agent_rewind_children "$path"))
                    set path (string trim -- "$path $w")
                else
                    set n (math $n + 1)
                end
        end
    end
    if test (count $words) -gt 1; and string match -q -- '-*' $words[-1]; and test $skip = 1
        __agent_rewind_reply (__agent_rewind_value "$path" $words[-1]) $cur
        return
    end
    if string match -q -- '-*' $cur
        string split ' ' -- (__agent_rewind_flags "$path")
        return
    end
    set -l children (__agent_rewind_children "$path")
    if test -n "$children"; and test $n = 0
        string split ' ' -- $children
        return
    end
    set -l kind (__agent_rewind_arg "$path" $n); and __agent_rewind_reply $kind $cur
end

complete -c agent-rewind -f -a '(__agent_rewind_complete)'
`

// flagNames are a node's flags, and --help, which kong gives every command.
func flagNames(n complNode) []string {
	names := []string{"--help"}
	for _, f := range n.flags {
		if !slices.Contains(names, f.name) {
			names = append(names, f.name)
		}
	}
	return names
}

// shQuote quotes s for a case pattern or an echo argument in sh and fish: single quotes, with
// none inside (command words and flag names have none; an enum word with one is refused).
func shQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "") + "'"
}
