package barrier

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// Rule is one effect rule of a rules file (see RulesFile and RULES.md).
type Rule struct {
	// Name identifies the rule in ledger records and refusal texts. A rule named like a built-in
	// rule replaces it.
	Name string `json:"name"`
	// Description says what the rule is for.
	Description string `json:"description,omitempty"`
	// Tool is a regular expression (RE2 syntax, unanchored) matched against the tool name, e.g.
	// "^mcp__stripe__". Empty: the rule is a shell rule and looks only at Command.
	Tool string `json:"tool,omitempty"`
	// Command is a regular expression matched against each normalised simple command of a shell
	// call: the program's base name and its arguments joined by single spaces, after variable
	// assignments and wrappers (sudo, env, timeout, ...) are removed, e.g. "^make deploy( |$)".
	// A program written with a path is also tried as written ("./scripts/deploy.sh --prod").
	// With Tool set as well, the tool's input must also hold a matching command.
	Command string `json:"command,omitempty"`
	// KeyFields lists the tool_input members (dotted paths for nested members) that make a tool
	// rule's key; the rest of the input is the payload, so the same key with other arguments is
	// refused as a payload mismatch. Empty: the key is the tool name and a hash of the whole
	// tool_input.
	KeyFields []string `json:"key_fields,omitempty"`
}

// Rules is a compiled rule set: a rules file's rules, tried first and in order, then the
// built-in rules the file leaves enabled. A *Rules is immutable and safe for concurrent use.
type Rules struct {
	source    string
	user      []compiledRule
	byProgram map[string][]*BuiltinRule // enabled built-in shell rules by program name
	toolRules []*BuiltinRule            // enabled built-in tool rules
}

type compiledRule struct {
	Rule
	tool, command *regexp.Regexp
}

var defaultRules = sync.OnceValue(func() *Rules {
	rs, err := compileRules(nil, nil, "")
	if err != nil {
		panic("barrier: built-in rules do not compile: " + err.Error()) // a bug in this package
	}
	return rs
})

// DefaultRules returns the built-in rules alone, compiled once per process.
func DefaultRules() *Rules { return defaultRules() }

// Source returns the rules file these rules were read from, or "" for the built-in rules alone.
func (rs *Rules) Source() string { return rs.source }

func compileRules(user []Rule, disable []string, source string) (*Rules, error) {
	rs := &Rules{source: source, byProgram: map[string][]*BuiltinRule{}}
	off := map[string]bool{}
	for _, n := range disable {
		off[n] = true
	}
	for _, r := range user {
		off[r.Name] = true // a rule with a built-in's name replaces it
		cr := compiledRule{Rule: r}
		var err error
		if r.Tool != "" {
			if cr.tool, err = regexp.Compile(r.Tool); err != nil {
				return nil, fmt.Errorf("rule %q: \"tool\": %w", r.Name, err)
			}
		}
		if r.Command != "" {
			if cr.command, err = regexp.Compile(r.Command); err != nil {
				return nil, fmt.Errorf("rule %q: \"command\": %w", r.Name, err)
			}
		}
		rs.user = append(rs.user, cr)
	}
	for i := range builtinRules {
		b := &builtinRules[i]
		if off[b.Name] {
			continue
		}
		if b.tool != nil {
			rs.toolRules = append(rs.toolRules, b)
		}
		for _, p := range b.Programs {
			rs.byProgram[p] = append(rs.byProgram[p], b)
		}
	}
	return rs, nil
}

// Match is what the rules found in one tool call.
type Match struct {
	Rule    string `json:"rule"`    // the rule that matched (the first, for several shell commands)
	Builtin bool   `json:"builtin"` // whether that rule is built in
	// Commands are the normalised simple commands that matched a shell rule, each as its words;
	// nil for a tool rule.
	Commands [][]string `json:"commands,omitempty"`
	// EffectKey is the value of a REWIND_EFFECT_KEY assignment on a matching command; Named
	// tells that there was one, even with an empty value.
	EffectKey string `json:"effect_key,omitempty"`
	Named     bool   `json:"named,omitempty"`
	// KeyFields are the matching tool rule's key fields.
	KeyFields []string `json:"key_fields,omitempty"`
}

// Classify reports whether a tool call is an external effect, and which rule says so; nil means
// it is not. It is pure: no I/O, no ledger. Only PreToolUse-like inputs are classified: the
// deciding events of every agent (see IsDecidingEvent).
func (rs *Rules) Classify(in Input) *Match {
	script, argv, isShell := in.ShellCommand()
	var cmds []command
	if isShell {
		cmds = commandsOf(script, argv)
	}
	toolName := in.ToolName

	// Tool rules of the rules file come first, in order.
	for i := range rs.user {
		r := &rs.user[i]
		if r.tool == nil || toolName == "" || !r.tool.MatchString(toolName) {
			continue
		}
		if r.command == nil {
			return &Match{Rule: r.Name, KeyFields: r.KeyFields}
		}
		if !isShell && cmds == nil {
			cmds = commandsOf(in.toolCommand())
		}
		var hits []command
		for _, c := range cmds {
			if matchCommand(r.command, c) {
				hits = append(hits, c)
			}
		}
		if len(hits) > 0 {
			return shellMatch(r.Name, false, hits)
		}
	}

	if isShell {
		var hits []command
		var first string
		var firstBuiltin bool
		for _, c := range cmds {
			name, builtin := rs.shellRule(c)
			if name == "" {
				continue
			}
			if first == "" {
				first, firstBuiltin = name, builtin
			}
			hits = append(hits, c)
		}
		if len(hits) > 0 {
			return shellMatch(first, firstBuiltin, hits)
		}
		return nil
	}

	if toolName == "" || !(strings.HasPrefix(toolName, "mcp__") || in.MCPTool || in.Event == EventBeforeMCPExecution) {
		return nil
	}
	for _, b := range rs.toolRules {
		if b.tool(toolName) {
			return &Match{Rule: b.Name, Builtin: true}
		}
	}
	return nil
}

// shellRule returns the first rule that classifies one simple command as an effect.
func (rs *Rules) shellRule(c command) (name string, builtin bool) {
	if len(c.argv) == 0 {
		return "", false
	}
	for i := range rs.user {
		r := &rs.user[i]
		if r.tool != nil || r.command == nil {
			continue
		}
		if matchCommand(r.command, c) {
			return r.Name, false
		}
	}
	for _, b := range rs.byProgram[c.argv[0]] {
		if b.shell(c.argv) {
			return b.Name, true
		}
	}
	return "", false
}

// matchCommand matches a rules file's command pattern against a normalised simple command,
// with the program's base name ("deploy.sh --prod") and, when it was written with a path, as
// written ("./scripts/deploy.sh --prod"): either is a match.
func matchCommand(re *regexp.Regexp, c command) bool {
	if re.MatchString(strings.Join(c.argv, " ")) {
		return true
	}
	if c.path == "" {
		return false
	}
	return re.MatchString(c.path + " " + strings.Join(c.argv[1:], " "))
}

func shellMatch(rule string, builtin bool, hits []command) *Match {
	m := &Match{Rule: rule, Builtin: builtin}
	for _, c := range hits {
		m.Commands = append(m.Commands, c.argv)
		if !m.Named && c.named {
			m.EffectKey, m.Named = c.effectKey, true
		}
	}
	return m
}
