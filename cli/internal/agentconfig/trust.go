package agentconfig

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agent-rewind/rewind/barrier"
	"github.com/agent-rewind/rewind/cli/internal/statebase"
)

// Whether a client runs a project's hooks at all: Codex and Gemini CLI read a project's files
// only in a trusted folder, Copilot CLI runs a folder's hooks only once it is trusted, and Codex
// runs each hook only once it is trusted itself. Each is read from where the client keeps it
// (measured with the real clients, tools/agents).

// TrustProblems adds to r what keeps the client from running agent-rewind's entries: the
// project's folder not trusted (for entries in the project), Codex's hooks not trusted, the
// store chosen by a variable the client does not pass its MCP server. codex is the codex
// program to ask ("" when not installed).
func TrustProblems(c *Client, l Locations, r *ClientReport, codex string) {
	if !r.Found {
		return
	}
	inProject := false
	for _, f := range r.Files {
		if f.Scope == ScopeProject && (len(f.Hooks) > 0 || f.Server != nil) {
			inProject = true
		}
	}
	switch c.Facts.Agent {
	case barrier.AgentCodex:
		codexTrust(c, l, r, codex, inProject)
	case barrier.AgentGemini:
		if inProject {
			if trusted, why := geminiTrusted(l); !trusted {
				r.Problems = append(r.Problems, Problem{c.Name, "Gemini CLI reads " + filepath.Join(l.Root, ".gemini", "settings.json") + " only in a trusted folder, and " + why,
					"cd " + l.Root + " && gemini (and trust the folder when it asks; headless: GEMINI_CLI_TRUST_WORKSPACE=true)"})
			}
		}
	case barrier.AgentCopilot:
		if inProject && !copilotTrusted(l) {
			r.Problems = append(r.Problems, Problem{c.Name, "Copilot CLI runs " + l.Root + "'s hooks and MCP servers only in a trusted folder, and it is not among the trustedFolders of " + filepath.Join(l.Home, ".copilot", "config.json") + " (copilot -p then runs neither, silently)",
				"cd " + l.Root + " && copilot (and trust the folder when it asks; for one copilot -p run: --trust-folder)"})
		}
	}
	storeVariables(c, r)
}

// codexTrust checks the project's trust and each of agent-rewind's hooks' trust.
func codexTrust(c *Client, l Locations, r *ClientReport, codex string, inProject bool) {
	cfg := CodexConfig(l)
	var doc *tval
	if b, err := os.ReadFile(cfg); err == nil {
		if d, err := parseTOML(string(b)); err == nil {
			doc = d
		} else {
			r.Problems = append(r.Problems, Problem{c.Name, cfg + " cannot be read: " + err.Error(), "fix " + cfg})
			return
		}
	}
	if inProject {
		level := ""
		if v := doc.lookup("projects", l.Root, "trust_level"); v != nil && v.kind == tString {
			level = v.str
		}
		if level != "trusted" {
			state := fmt.Sprintf("its trust_level is %q", level)
			if level == "" {
				state = "it is not trusted (no [projects." + tomlString(l.Root) + "] trust_level)"
			}
			r.Problems = append(r.Problems, Problem{c.Name, fmt.Sprintf("Codex reads %s only in a trusted project, and in %s %s", filepath.Join(l.Root, ".codex"), cfg, state),
				"cd " + l.Root + " && codex (and trust the project when it asks)"})
		}
	}
	if codex == "" {
		r.Notes = append(r.Notes, "whether Codex trusts agent-rewind's hooks was not checked: codex is not on PATH")
		return
	}
	hooks, err := CodexHooks(codex, l.Root)
	if err != nil {
		r.Notes = append(r.Notes, "whether Codex trusts agent-rewind's hooks was not checked: "+err.Error())
		return
	}
	for i := range r.Files {
		f := &r.Files[i]
		for j := range f.Hooks {
			h := &f.Hooks[j]
			h.Trust = "not listed by codex app-server"
			for _, ch := range hooks {
				if ch.ours(f.Path) && ch.EventName == codexEventName(h.Event) {
					h.Trust = ch.TrustStatus
				}
			}
			if h.Trust != "trusted" {
				r.Problems = append(r.Problems, Problem{c.Name, fmt.Sprintf("Codex: the %s hook in %s is %s, and Codex skips a hook it does not trust, silently", h.Event, f.Path, h.Trust),
					"agent-rewind setup codex" + scopeFlag(f.Scope) + " --trust-hooks"})
			}
		}
	}
}

// codexEventName is how codex app-server names a hook event (PreToolUse: preToolUse).
func codexEventName(e string) string {
	if e == "" {
		return e
	}
	return strings.ToLower(e[:1]) + e[1:]
}

// geminiTrusted reads Gemini CLI's folder trust as 0.61.0 decides it: GEMINI_CLI_TRUST_WORKSPACE,
// else trust switched off in the user settings (security.folderTrust.enabled false), else the
// longest rule of
// ~/.gemini/trustedFolders.json that holds the folder (TRUST_FOLDER, TRUST_PARENT: the rule's
// parent, DO_NOT_TRUST).
func geminiTrusted(l Locations) (bool, string) {
	switch l.env("GEMINI_CLI_TRUST_WORKSPACE") {
	case "true":
		return true, ""
	case "false":
		return false, "GEMINI_CLI_TRUST_WORKSPACE=false distrusts every folder"
	}
	if b, err := os.ReadFile(filepath.Join(l.Home, ".gemini", "settings.json")); err == nil {
		if n, err := parseJSON(b); err == nil && n.at([]string{"security", "folderTrust", "enabled"}) != nil && n.at([]string{"security", "folderTrust", "enabled"}).raw == "false" {
			return true, ""
		}
	}
	file := filepath.Join(l.Home, ".gemini", "trustedFolders.json")
	if f := l.env("GEMINI_CLI_TRUSTED_FOLDERS_PATH"); f != "" {
		file = f
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return false, "no folder is trusted (" + file + " does not exist)"
	}
	n, err := parseJSON(b)
	if err != nil {
		return false, file + " cannot be read: " + err.Error()
	}
	best, level := -1, ""
	for i, rule := range n.keys {
		lvl, _ := n.vals[i].str()
		eff := rule
		if lvl == "TRUST_PARENT" {
			eff = filepath.Dir(rule)
		}
		if within(l.Root, resolved(eff)) && len(rule) > best {
			best, level = len(rule), lvl
		}
	}
	switch level {
	case "TRUST_FOLDER", "TRUST_PARENT":
		return true, ""
	case "DO_NOT_TRUST":
		return false, l.Root + " is marked DO_NOT_TRUST in " + file
	}
	return false, l.Root + " is not trusted in " + file
}

// within reports whether path is dir or inside it.
func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// copilotTrusted reads Copilot CLI's trusted folders: trustedFolders in ~/.copilot/config.json,
// which 1.0.102 writes with // comments above it, and trusted_folders, the name it reads too
// (and rewrites as trustedFolders): measured, TestCopilotCLITrust.
func copilotTrusted(l Locations) bool {
	b, err := os.ReadFile(filepath.Join(l.Home, ".copilot", "config.json"))
	if err != nil {
		return false
	}
	var cfg struct {
		Trusted []string `json:"trustedFolders"`
		Legacy  []string `json:"trusted_folders"`
	}
	if json.Unmarshal(stripLineComments(b), &cfg) != nil {
		return false
	}
	for _, d := range append(cfg.Trusted, cfg.Legacy...) {
		if within(l.Root, resolved(d)) {
			return true
		}
	}
	return false
}

// stripLineComments blanks the // comments of a JSON file (outside strings), as clients that
// write JSON with comments read it.
func stripLineComments(b []byte) []byte {
	out := append([]byte(nil), b...)
	inString, escaped := false, false
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case !inString && c == '/' && i+1 < len(out) && out[i+1] == '/':
			for ; i < len(out) && out[i] != '\n'; i++ {
				out[i] = ' '
			}
		}
	}
	return out
}

// storeVariables flags an MCP server that would write to another store than the hooks: the
// client passes its servers only some variables (Codex), and one that chooses the store is set
// here but neither passed by the client nor by the entry's env_vars.
func storeVariables(c *Client, r *ClientReport) {
	if c.Facts.MCPEnvOnly == nil {
		return
	}
	var read []string
	statebase.Dir(func(k string) string { read = append(read, k); return "" })
	for _, f := range r.Files {
		if f.Server == nil {
			continue
		}
		for _, k := range read {
			if os.Getenv(k) == "" || slices.Contains(c.Facts.MCPEnvOnly, k) || slices.Contains(f.Server.EnvVars, k) {
				continue
			}
			r.Problems = append(r.Problems, Problem{c.Name, fmt.Sprintf("%s passes its MCP servers only %s: with %s set, the server of %s writes to another store than the hooks (its env_vars do not pass it)",
				c.Facts.Name, strings.Join(c.Facts.MCPEnvOnly, ", "), k, f.Path), "agent-rewind setup " + c.Name + scopeFlag(f.Scope)})
		}
	}
}
