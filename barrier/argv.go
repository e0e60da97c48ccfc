package barrier

import "strings"

// Helpers that read a program's arguments the way most command-line parsers do, so that a
// built-in rule can ask "what is the subcommand?" without being fooled by global options.

// flagSet is a set of option names whose value is the next word (when not given as --name=value).
type flagSet map[string]bool

func flags(names string) flagSet {
	s := flagSet{}
	for _, n := range strings.Fields(names) {
		s[n] = true
	}
	return s
}

// positionals returns the words of args that are not options, skipping the value word of each
// option in valueFlags. Every word after "--" is positional.
func positionals(args []string, valueFlags flagSet) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i+1:]...)
		}
		if len(a) > 1 && a[0] == '-' {
			if valueFlags[a] {
				i++
			}
			continue
		}
		out = append(out, a)
	}
	return out
}

// subcommand returns the first positional word of args and the words after it.
func subcommand(args []string, valueFlags flagSet) (sub string, rest []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			if i+1 < len(args) {
				return args[i+1], args[i+2:]
			}
			return "", nil
		}
		if len(a) > 1 && a[0] == '-' {
			if valueFlags[a] {
				i++
			}
			continue
		}
		return a, args[i+1:]
	}
	return "", nil
}

// hasFlag reports whether args holds one of names, exactly or (for a long option) as name=value.
// Words after "--" are not options.
func hasFlag(args []string, names ...string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		for _, n := range names {
			if a == n || (strings.HasPrefix(n, "--") && strings.HasPrefix(a, n+"=")) {
				return true
			}
		}
	}
	return false
}

// flagValue returns the value of the first occurrence of one of names: the next word, or the
// text after "=" (long options), or the rest of the word (short options, as in -XPOST).
func flagValue(args []string, names ...string) (string, bool) {
	for i, a := range args {
		if a == "--" {
			return "", false
		}
		for _, n := range names {
			switch {
			case a == n:
				if i+1 < len(args) {
					return args[i+1], true
				}
				return "", true
			case strings.HasPrefix(n, "--") && strings.HasPrefix(a, n+"="):
				return a[len(n)+1:], true
			case len(n) == 2 && n[0] == '-' && n[1] != '-' && strings.HasPrefix(a, n) && len(a) > 2 && a[1] != '-':
				return a[2:], true
			}
		}
	}
	return "", false
}

// dryRun reports whether args ask for a dry run (--dry-run, --dry-run=client|server|true),
// which touches nothing outside. --dry-run=none and =false are real runs.
func dryRun(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--dry-run" {
			return true
		}
		if v, ok := strings.CutPrefix(a, "--dry-run="); ok {
			return v != "none" && v != "false"
		}
	}
	return false
}

// words splits an identifier such as create_charge, createCharge or send-email into its
// lowercase words.
func words(name string) []string {
	var out []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, cur.String())
			cur.Reset()
		}
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_' || c == '-' || c == '.' || c == ' ' || c == '/' || c == ':':
			flush()
		case c >= 'A' && c <= 'Z':
			if i > 0 && name[i-1] >= 'a' && name[i-1] <= 'z' {
				flush()
			}
			cur.WriteByte(c + ('a' - 'A'))
		default:
			cur.WriteByte(c)
		}
	}
	flush()
	return out
}
