package gateway

import "strings"

// FlagValue is one gateway flag as it was given on the command line.
type FlagValue struct {
	// Value is the flag's value: the text given for a value flag; "true" or "false" for a
	// boolean flag ("false" for a --no-X form).
	Value string
	// Arg is the argument as written ("--port=8788", "--no-preserve-cache"), for messages.
	Arg string
}

// flagKind is how a gateway flag takes its value.
type flagKind uint8

const (
	flagValue     flagKind = iota // --name VALUE or --name=VALUE
	flagBool                      // --name, or --name=true / --name=false
	flagNegatable                 // a flagBool that also has a --no-name form
)

// gatewayFlags are the flags of "agent-rewind gateway", by name without the dashes.
var gatewayFlags = map[string]flagKind{
	"port": flagValue, "host": flagValue, "upstream": flagValue, "profile": flagValue,
	"tenant": flagValue, "config": flagValue, "storage": flagValue, "storage-directory": flagValue,
	"epoch": flagValue, "replay-cursor": flagValue,
	"preserve-cache": flagNegatable, "prune-context": flagNegatable,
	"record-only": flagBool, "allow-remote": flagBool, "tls-cert": flagValue, "tls-key": flagValue, "metrics-listen": flagValue,
}

// globalValueFlags are agent-rewind's global flags that take a value: their value is skipped
// so that it is never read as a flag.
var globalValueFlags = map[string]bool{"workspace": true}

// ScanFlags reads the gateway flags from a command line exactly as it was typed (the
// arguments after the program name; the command word and global flags may be among them,
// and are skipped). It exists because a flag parser that keeps the last of two values
// cannot tell the person that they gave two: ScanFlags fails on a flag given twice
// ("--port 1 --port 2"), on a conflicting pair ("--preserve-cache --no-preserve-cache",
// "--record-only --replay-cursor C"), on a value flag without a value ("--port" at the end,
// "--port=", "--port --tenant x"), and on a boolean flag with a value other than exactly
// true or false. Arguments after "--" are not flags. Flags it does not know are left to
// the command-line parser. The result maps a flag's name (without dashes; "preserve-cache"
// for both of its forms) to how it was given.
func ScanFlags(args []string) (map[string]FlagValue, error) {
	out := map[string]FlagValue{}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			break
		}
		if !strings.HasPrefix(arg, "--") {
			continue // the command word, or a value of a flag that is not ours
		}
		name, value, hasValue := strings.Cut(arg[2:], "=")
		if globalValueFlags[name] {
			if !hasValue {
				i++
			}
			continue
		}
		negated := false
		kind, ok := gatewayFlags[name]
		if !ok {
			if base, cut := strings.CutPrefix(name, "no-"); cut && gatewayFlags[base] == flagNegatable {
				name, kind, ok, negated = base, flagNegatable, true, true
			}
		}
		if !ok {
			continue // a global flag, or one the command-line parser reports
		}
		var v string
		switch {
		case kind == flagValue && hasValue:
			v = value
		case kind == flagValue:
			if i+1 >= len(args) || strings.HasPrefix(args[i+1], "--") {
				return nil, configErr(arg, "the flag needs a value: --%s VALUE or --%s=VALUE", name, name)
			}
			i++
			v = args[i]
			arg += " " + v
		case negated && hasValue:
			return nil, configErr(arg, "--no-%s takes no value: write --no-%s, or --%s=false", name, name, name)
		case negated:
			v = "false"
		case hasValue:
			if value != "true" && value != "false" {
				return nil, configErr(arg, "a boolean flag's value must be exactly true or false, not %q", value)
			}
			v = value
		default:
			v = "true"
		}
		if kind == flagValue && v == "" {
			return nil, configErr(arg, "the flag's value is empty: give a value, or leave the flag out to use the configuration file, the environment or the default")
		}
		if prev, dup := out[name]; dup {
			if prev.Value != v && kind != flagValue {
				return nil, configErr(arg, "conflicts with %s: give one of them", prev.Arg)
			}
			return nil, configErr(arg, "--%s is given twice (%s and %s): give it once", name, prev.Arg, arg)
		}
		out[name] = FlagValue{Value: v, Arg: arg}
	}
	if ro, ok := out["record-only"]; ok && ro.Value == "true" {
		if rc, ok := out["replay-cursor"]; ok {
			return nil, configErr(ro.Arg, "conflicts with %s: --record-only records live calls, --replay-cursor replays them; give one", rc.Arg)
		}
	}
	return out, nil
}

// flagFrom names a flag for a Setting's From.
func flagFrom(name string, fv FlagValue) string {
	if fv.Value == "false" && gatewayFlags[name] == flagNegatable && strings.HasPrefix(fv.Arg, "--no-") {
		return "--no-" + name
	}
	return "--" + name
}

// String is the flag as given.
func (f FlagValue) String() string { return f.Arg }
