package agentconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agent-rewind/rewind/internal/durable"
)

// Request is one run of setup: a client's files of one scope, for one project.
type Request struct {
	Client  *Client
	Scope   Scope
	Loc     Locations
	Bin     Binaries
	Records string // the folder of setup's records (record.go)
	DryRun  bool   // say what would change, change nothing
	Remove  bool   // take out what setup added
}

// Result is what setup did (or, with DryRun, would do): the --json shape of agent-rewind setup.
type Result struct {
	Client    string       `json:"client"`    // as setup takes it: claude-code, codex, ...
	Name      string       `json:"name"`      // as people call it
	Scope     Scope        `json:"scope"`     // project or user
	Workspace string       `json:"workspace"` // the project the entries protect
	Binaries  Binaries     `json:"binaries"`  // the programs the entries run
	DryRun    bool         `json:"dryRun"`
	Remove    bool         `json:"remove"`
	Files     []FileChange `json:"files"` // every file of the client in this scope, changed or not
	Notes     []string     `json:"notes"` // what to know or do next
}

// Changed reports whether any file was (or would be) changed.
func (r *Result) Changed() bool {
	for _, f := range r.Files {
		if f.Action != ActionUnchanged {
			return true
		}
	}
	return false
}

// FileChange is what happened to one file.
type FileChange struct {
	Path    string   `json:"path"`
	What    string   `json:"what"`   // hooks, MCP server
	Action  string   `json:"action"` // create, change, delete, unchanged
	Changes []Change `json:"changes"`
	Kept    []Kept   `json:"kept,omitempty"` // entries left as they are, and why
}

// The actions on a file.
const (
	ActionCreate    = "create"
	ActionChange    = "change"
	ActionDelete    = "delete"
	ActionUnchanged = "unchanged"
)

// Change is one entry added or taken out.
type Change struct {
	Op    string `json:"op"`    // add or remove
	At    string `json:"at"`    // where: hooks.PreToolUse[+], mcpServers.agent-rewind, [mcp_servers.agent-rewind], the file
	Value string `json:"value"` // the entry, as compact JSON or TOML text
}

// Kept is an entry setup did not change.
type Kept struct {
	At  string `json:"at"`
	Why string `json:"why"`
}

// planned is one file's change, computed before anything is written.
type planned struct {
	change FileChange
	file   string // the file written (a symlink's target)
	data   []byte // its new content (nil with del)
	del    bool
	mode   fs.FileMode
	dirs   []string // folders to make first, outermost first
	rec    *Record  // the record to save (nil: leave it)
	recs   records
	made   []string // the folders setup made for the file earlier (deleted with it when empty)
}

// Run plans every part, and unless DryRun writes them. A file that cannot be read as its format
// stops it before anything is written: setup changes nothing then.
func Run(req Request) (*Result, error) {
	c := req.Client
	res := &Result{Client: c.Name, Name: c.Facts.Name, Scope: req.Scope, Workspace: req.Loc.Root, Binaries: req.Bin,
		DryRun: req.DryRun, Remove: req.Remove, Files: []FileChange{}, Notes: []string{}}
	if !req.Remove {
		res.Notes = append(res.Notes, c.Notes(req.Scope, req.Loc)...)
	}
	recs := records(req.Records)
	var plans []*planned
	for _, part := range c.PartsIn(req.Scope) {
		p, err := plan(req, part, recs)
		if err != nil {
			return nil, err
		}
		plans = append(plans, p)
		res.Files = append(res.Files, p.change)
	}
	if req.DryRun {
		return res, nil
	}
	for _, p := range plans {
		if err := p.apply(req.Remove); err != nil {
			return res, fmt.Errorf("%s: %w (files listed before it were written)", p.change.Path, err)
		}
	}
	return res, nil
}

// refusal is a file setup cannot edit: it says which, what is wrong and what to do.
func refusal(file, name string, err error) error {
	return fmt.Errorf("%s: %w; setup changed nothing: fix or move the file, then run agent-rewind setup %s again (or add agent-rewind's entries by hand: docs/agents.md)", file, err, name)
}

// plan computes one part's change.
func plan(req Request, part Part, recs records) (*planned, error) {
	file := part.Path(req.Loc)
	mode := fs.FileMode(0o644)
	if part.format == formatScript {
		mode = 0o755
	}
	target, orig, exists, mode, err := readTarget(file, mode)
	if err != nil {
		return nil, refusal(file, req.Client.Name, err)
	}
	rec, err := recs.load(file)
	if err != nil {
		return nil, err
	}
	p := &planned{file: target, mode: mode, recs: recs, made: rec.Dirs, change: FileChange{Path: file, What: part.What, Changes: []Change{}}}
	if others := without(rec.Clients, req.Client.Name); req.Remove && len(others) > 0 {
		// One file serves two clients (.github/hooks: VS Code and Copilot): it stays theirs.
		p.change.Action = ActionUnchanged
		p.change.Kept = append(p.change.Kept, Kept{At: "the file's entries", Why: "also set up for " + strings.Join(others, ", ") + ": kept (agent-rewind setup " + others[0] + " --remove takes them out)"})
		next := *rec
		next.Clients = others
		p.rec = &next
		return p, nil
	}
	var data []byte
	var next *Record
	switch part.format {
	case formatJSON:
		data, next, err = planJSON(req, part, string(orig), exists, rec, p)
	case formatTOML:
		data, next, err = planTOML(req, part, string(orig), rec, p)
	case formatScript:
		data, next, err = planScript(req, part, string(orig), exists, rec, p)
	}
	if err != nil {
		return nil, refusal(file, req.Client.Name, err)
	}
	next.File = file
	next.Clients = addName(rec.Clients, req.Client.Name)
	switch {
	case req.Remove && exists && (data == nil || rec.Created && isEmptyConfig(part.format, data)):
		p.del, p.change.Action = true, ActionDelete
		p.change.Changes = append(p.change.Changes, Change{Op: "remove", At: "the file", Value: "made by setup, empty now"})
	case exists && string(data) == string(orig):
		p.change.Action = ActionUnchanged
		if !req.Remove {
			next.Created, next.Dirs = rec.Created, rec.Dirs
		}
	case !exists && (req.Remove || data == nil):
		p.change.Action = ActionUnchanged
	case !exists:
		p.change.Action = ActionCreate
		next.Created = true
		p.dirs = missingDirs(filepath.Dir(target))
		next.Dirs = p.dirs
	default:
		p.change.Action = ActionChange
		next.Created, next.Dirs = next.Created || rec.Created, rec.Dirs
	}
	p.data = data
	if next.empty() {
		next = &Record{File: file}
	}
	if !sameRecord(rec, next) {
		p.rec = next
	}
	return p, nil
}

// readTarget reads a configuration file as setup edits it: the file a symlink points at (a
// dotfiles manager's link: the file it points at is written), its content, whether it exists,
// and its mode (def when it does not).
func readTarget(file string, def fs.FileMode) (target string, data []byte, exists bool, mode fs.FileMode, err error) {
	target, mode = file, def
	if r, err := filepath.EvalSymlinks(file); err == nil {
		target = r
	}
	data, err = os.ReadFile(target)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return target, nil, false, mode, err
	}
	if st, serr := os.Stat(target); serr == nil {
		mode = st.Mode().Perm()
	}
	return target, data, err == nil, mode, nil
}

// isEmptyConfig reports whether a file setup made holds nothing any more.
func isEmptyConfig(f format, data []byte) bool {
	switch f {
	case formatJSON:
		n, err := parseJSON(data)
		return err == nil && n.kind == jObject && len(n.keys) == 0
	case formatTOML:
		doc, err := parseTOML(string(data))
		return err == nil && len(doc.keys) == 0 && strings.TrimSpace(stripComments(string(data))) == ""
	}
	return true
}

// stripComments drops TOML comment lines, to tell a file of comments alone.
func stripComments(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

func without(names []string, n string) []string {
	var out []string
	for _, x := range names {
		if x != n {
			out = append(out, x)
		}
	}
	return out
}

func addName(names []string, n string) []string {
	for _, x := range names {
		if x == n {
			return names
		}
	}
	return append(append([]string(nil), names...), n)
}

func sameRecord(a, b *Record) bool {
	if a.Created != b.Created || a.Script != b.Script || a.Original != b.Original || a.Mode != b.Mode || len(a.JSON) != len(b.JSON) || len(a.Replaced) != len(b.Replaced) ||
		len(a.Blocks) != len(b.Blocks) || strings.Join(a.Dirs, "\n") != strings.Join(b.Dirs, "\n") || strings.Join(a.Clients, " ") != strings.Join(b.Clients, " ") {
		return false
	}
	for i := range a.JSON {
		x, y := a.JSON[i], b.JSON[i]
		if x.where() != y.where() || x.Value != y.Value || x.Container != y.Container {
			return false
		}
	}
	for i := range a.Replaced {
		if a.Replaced[i].where() != b.Replaced[i].where() || a.Replaced[i].Value != b.Replaced[i].Value {
			return false
		}
	}
	for i := range a.Blocks {
		if a.Blocks[i] != b.Blocks[i] {
			return false
		}
	}
	return true
}

// missingDirs are the folders to make for dir, outermost first.
func missingDirs(dir string) []string {
	var out []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || filepath.Dir(d) == d {
			break
		}
		out = append([]string{d}, out...)
	}
	return out
}

// apply writes one planned change. Entries are recorded before they are written, and
// forgotten after they are taken out (record.go).
func (p *planned) apply(remove bool) error {
	if p.change.Action == ActionUnchanged {
		if p.rec != nil {
			return p.recs.save(p.rec)
		}
		return nil
	}
	if !remove && p.rec != nil {
		if err := p.recs.save(p.rec); err != nil {
			return err
		}
	}
	if p.del {
		if err := durable.Remove(p.file); err != nil {
			return err
		}
		p.removeDirs()
	} else {
		for _, d := range p.dirs {
			if err := durable.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
		if err := durable.WriteFile(p.file, p.data, p.mode); err != nil {
			return err
		}
	}
	if remove && p.rec != nil {
		return p.recs.save(p.rec)
	}
	return nil
}

// removeDirs removes the folders setup made for a file it deletes, innermost first, each only
// when empty.
func (p *planned) removeDirs() {
	for i := len(p.made) - 1; i >= 0; i-- {
		if os.Remove(p.made[i]) != nil {
			return // not empty: something else lives there
		}
		durable.SyncDir(filepath.Dir(p.made[i]))
	}
}
