package barrier

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/agent-rewind/rewind/internal/regular"
)

// RulesFileName is the effect rules file's name in the workspace's state directory (the
// agent-rewind CLI keeps that directory outside the workspace: docs/store.md). It is kept with
// the state on purpose: nothing there is captured by a checkpoint or touched by a rewind, so a
// rewind can never change which calls are effects or how their keys are derived (a key that
// changed after a rewind would let a spent effect fire again). The price is that it is not
// committed with the project; to share rules, commit a copy elsewhere and install it.
const RulesFileName = "effects.json"

// RulesFile is the rules file relative to a workspace root whose state directory is
// <root>/.rewind (LoadRules); the CLI's stores live elsewhere and use LoadRulesFile.
const RulesFile = ".rewind/" + RulesFileName

// RulesFileVersion is the rules file format this package reads.
const RulesFileVersion = 1

// MaxRulesFileSize bounds the rules file, which is read before every tool call.
const MaxRulesFileSize = 1 << 20

// ErrBadRules reports a rules file that cannot be used. The error says which file, which rule and
// what to change. The guard refuses every call it is asked about until the file is fixed,
// rather than running without the rules the file asked for.
var ErrBadRules = errors.New("bad effect rules file")

// rulesFile is the JSON schema of RulesFile.
type rulesFile struct {
	Version *int     `json:"version"`
	Disable []string `json:"disable"`
	Rules   []Rule   `json:"rules"`
}

// LoadRules returns the rules of the workspace at root: its RulesFile on top of the built-in
// rules, or the built-in rules alone when the file does not exist. It reads one file at most.
func LoadRules(root string) (*Rules, error) {
	return LoadRulesFile(filepath.Join(root, RulesFile))
}

// LoadRulesFile returns the rules in the rules file name on top of the built-in rules, or the
// built-in rules alone when the file does not exist. It reads one file at most.
func LoadRulesFile(name string) (*Rules, error) {
	f, err := regular.Open(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return DefaultRules(), nil
		}
		return nil, fmt.Errorf("%w: %v", ErrBadRules, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxRulesFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("%w: read %s: %v", ErrBadRules, name, err)
	}
	return ParseRules(data, name)
}

// ParseRules compiles a rules file's content; source names it in errors.
func ParseRules(data []byte, source string) (*Rules, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrBadRules, source, fmt.Sprintf(format, args...))
	}
	if len(data) > MaxRulesFileSize {
		return nil, bad("it is larger than %d bytes", MaxRulesFileSize)
	}
	var rf rulesFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rf); err != nil {
		return nil, bad("%v (see RULES.md for the schema: {\"version\": 1, \"disable\": [...], \"rules\": [...]})", err)
	}
	if dec.More() {
		return nil, bad("trailing data after the JSON object")
	}
	if rf.Version == nil {
		return nil, bad(`"version" is missing (write "version": %d)`, RulesFileVersion)
	}
	if *rf.Version != RulesFileVersion {
		return nil, bad(`"version" is %d; this agent-rewind reads version %d`, *rf.Version, RulesFileVersion)
	}
	builtin := map[string]bool{}
	var names []string
	for _, b := range builtinRules {
		builtin[b.Name] = true
		names = append(names, b.Name)
	}
	for _, n := range rf.Disable {
		if !builtin[n] {
			return nil, bad("\"disable\" names %q, which is not a built-in rule (the built-in rules are %s)", n, strings.Join(names, ", "))
		}
	}
	seen := map[string]bool{}
	for i, r := range rf.Rules {
		where := fmt.Sprintf("rule %d", i+1)
		if r.Name != "" {
			where = fmt.Sprintf("rule %q", r.Name)
		}
		if !validRuleName(r.Name) {
			return nil, bad("%s: \"name\" must be 1 to 64 characters of a-z, 0-9, '-', '_' or '.'", where)
		}
		if seen[r.Name] {
			return nil, bad("%s is defined twice", where)
		}
		seen[r.Name] = true
		if r.Tool == "" && r.Command == "" {
			return nil, bad("%s has neither \"tool\" nor \"command\": give a tool-name pattern, a command pattern, or both", where)
		}
		if len(r.KeyFields) > 0 && r.Tool == "" {
			return nil, bad("%s has \"key_fields\" but no \"tool\": key fields name members of a tool's input; shell rules derive keys from the command", where)
		}
		for _, k := range r.KeyFields {
			if k == "" || strings.HasPrefix(k, ".") || strings.HasSuffix(k, ".") || strings.Contains(k, "..") {
				return nil, bad("%s: key field %q is not a member name or dotted path such as \"order.id\"", where, k)
			}
		}
	}
	rs, err := compileRules(rf.Rules, rf.Disable, source)
	if err != nil {
		return nil, bad("%v (patterns use Go's RE2 syntax: https://golang.org/s/re2syntax)", err)
	}
	return rs, nil
}

func validRuleName(n string) bool {
	if n == "" || len(n) > 64 {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}
