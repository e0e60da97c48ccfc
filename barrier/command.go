package barrier

import (
	"path"
	"strings"
)

// EffectKeyVar is the environment assignment an agent puts before a shell command to name its
// effect explicitly: `REWIND_EFFECT_KEY=release-v1.4.0 git push origin v1.4.0`. The key of the
// call is then "shell:" + the value instead of a hash of the command, so that a distinct new
// effect with the same command line (a second `git push` of new commits) can be admitted under a
// new key. The assignment is harmless to the command itself.
const EffectKeyVar = "REWIND_EFFECT_KEY"

// command is one simple command, normalised: leading assignments and wrappers (sudo, env,
// timeout, ...) removed, and the program's path reduced to its base name.
type command struct {
	argv      []string // argv[0] is the program's base name
	path      string   // the program as written, when it had a directory part ("./deploy.sh")
	effectKey string   // the value of a REWIND_EFFECT_KEY assignment
	named     bool     // whether the command had a REWIND_EFFECT_KEY assignment (even an empty one)
}

// commandsOf returns the normalised simple commands of a shell command line (script) or of an
// argument vector (argv), descending into `sh -c`, `eval` and `env -S` scripts.
func commandsOf(script string, argv []string) []command {
	var words [][]string
	if argv != nil {
		words = [][]string{argv}
	} else {
		words = splitScript(script, 0)
	}
	var out []command
	for _, w := range words {
		out = appendNormalized(out, w, 0)
		if len(out) >= maxSimpleCommands {
			break
		}
	}
	return out
}

// Reserved words that may start a simple command and are not the program.
var shellKeywords = map[string]bool{
	"!": true, "{": true, "}": true, "if": true, "then": true, "else": true, "elif": true,
	"do": true, "while": true, "until": true, "coproc": true,
}

// appendNormalized normalises one simple command's words and appends the result (or, for
// `sh -c` and friends, the commands of the inner script).
func appendNormalized(out []command, words []string, depth int) []command {
	var c command
	for guard := 0; guard < 64 && len(words) > 0; guard++ {
		w := words[0]
		if shellKeywords[w] {
			words = words[1:]
			continue
		}
		if name, value, ok := assignment(w); ok {
			if name == EffectKeyVar {
				c.effectKey, c.named = value, true
			}
			words = words[1:]
			continue
		}
		prog := path.Base(w)
		rest := words[1:]
		switch prog {
		case "sudo", "doas":
			words = skipOptions(rest, "-u -g -C -D -p -r -t -T -U -R", true)
		case "env":
			var script string
			words, script = skipEnvOptions(rest)
			if script != "" && depth < maxShellDepth {
				for _, inner := range splitScript(script+" "+strings.Join(words, " "), depth+1) {
					out = appendNormalized(out, inner, depth+1)
				}
				return out
			}
		case "command", "builtin":
			if len(rest) > 0 && (rest[0] == "-v" || rest[0] == "-V") {
				return out // a lookup, not a run
			}
			words = skipOptions(rest, "", false)
		case "exec":
			words = skipOptions(rest, "-a", false)
		case "nohup", "setsid", "chronic", "unbuffer", "time":
			words = skipOptions(rest, "-f -o", false)
		case "stdbuf":
			words = skipOptions(rest, "-i -o -e", false)
		case "nice":
			words = skipOptions(rest, "-n", false)
		case "ionice":
			words = skipOptions(rest, "-c -n -p -P -u", false)
		case "timeout":
			words = skipOptions(rest, "-s -k", false)
			if len(words) > 0 { // the duration
				words = words[1:]
			}
		case "xargs":
			words = skipOptions(rest, "-I -L -n -P -s -d -E -a", false)
		case "bash", "sh", "zsh", "dash", "ksh", "mksh", "fish":
			if script, ok := shellDashC(rest); ok {
				if depth < maxShellDepth {
					for _, inner := range splitScript(script, depth+1) {
						out = appendNormalized(out, inner, depth+1)
					}
				}
				return out
			}
			c.argv = append([]string{prog}, rest...)
			return append(out, c)
		case "eval":
			if depth < maxShellDepth {
				for _, inner := range splitScript(strings.Join(rest, " "), depth+1) {
					out = appendNormalized(out, inner, depth+1)
				}
			}
			return out
		default:
			c.argv = append([]string{prog}, rest...)
			if prog != w {
				c.path = w
			}
			return append(out, c)
		}
	}
	return out
}

// assignment reports whether w is a shell variable assignment NAME=value (NAME[i]=, NAME+= too).
func assignment(w string) (name, value string, ok bool) {
	eq := strings.IndexByte(w, '=')
	if eq <= 0 {
		return "", "", false
	}
	name = w[:eq]
	name = strings.TrimSuffix(name, "+")
	if b := strings.IndexByte(name, '['); b > 0 && strings.HasSuffix(name, "]") {
		name = name[:b]
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return "", "", false
		}
	}
	return name, w[eq+1:], name != ""
}

// skipOptions drops leading options from args: words starting with '-' up to "--" (dropped too)
// or the first other word. valueFlags lists, space-separated, the flags whose value is the next
// word. With assignments, NAME=value words after the options are dropped as well (sudo FOO=1 cmd).
func skipOptions(args []string, valueFlags string, assignments bool) []string {
	vf := strings.Fields(valueFlags)
	for len(args) > 0 {
		a := args[0]
		if a == "--" {
			return args[1:]
		}
		if assignments {
			if _, _, ok := assignment(a); ok {
				args = args[1:]
				continue
			}
		}
		if len(a) < 2 || a[0] != '-' {
			return args
		}
		args = args[1:]
		for _, f := range vf {
			if a == f && len(args) > 0 {
				args = args[1:]
				break
			}
		}
	}
	return args
}

// skipEnvOptions drops env's options and assignments; it returns the -S (split string) script
// when there is one.
func skipEnvOptions(args []string) (rest []string, script string) {
	for len(args) > 0 {
		a := args[0]
		switch {
		case a == "--":
			return args[1:], script
		case a == "-S" || a == "--split-string":
			if len(args) > 1 {
				script = args[1]
				args = args[2:]
				continue
			}
			args = args[1:]
		case strings.HasPrefix(a, "--split-string="):
			script = strings.TrimPrefix(a, "--split-string=")
			args = args[1:]
		case strings.HasPrefix(a, "-S") && len(a) > 2:
			script = a[2:]
			args = args[1:]
		case a == "-u" || a == "-C" || a == "--unset" || a == "--chdir":
			if len(args) > 1 {
				args = args[2:]
			} else {
				args = args[1:]
			}
		case len(a) > 1 && a[0] == '-':
			args = args[1:]
		default:
			if _, _, ok := assignment(a); ok {
				args = args[1:]
				continue
			}
			return args, script
		}
	}
	return args, script
}

// shellDashC finds the script of `sh -c script`, with -c alone or in a cluster (-lc, -ec).
// Without -c the shell runs a script file, which the guard cannot see into.
func shellDashC(args []string) (string, bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--" || len(a) < 2 || (a[0] != '-' && a[0] != '+'):
			return "", false // a script file, or the end of the options
		case strings.HasPrefix(a, "--"):
			continue // --login, --norc, ...
		case a == "-o" || a == "+o" || a == "-O" || a == "+O":
			i++ // -o pipefail: the option name is the next word
		case a[0] == '-' && strings.ContainsRune(a[1:], 'c'):
			for _, b := range args[i+1:] {
				if len(b) > 1 && (b[0] == '-' || b[0] == '+') {
					continue
				}
				return b, true
			}
			return "", false
		}
	}
	return "", false
}
