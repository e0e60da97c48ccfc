package agentconfig

import (
	"fmt"
	"strings"
)

// The three kinds of file setup writes, each planned from the shipped file it is made from:
// JSON files merged member by member, TOML tables appended as text, and whole hook scripts.

// shippedEntries returns the members of a part's shipped JSON file that it merges, with their
// commands filled in by f (absolute paths, the project where the client needs it); with f nil,
// as shipped.
func shippedEntries(part Part, f *filler) (*jnode, error) {
	src, err := shippedFile(part.Shipped)
	if err != nil {
		return nil, err
	}
	n, err := parseJSON([]byte(src))
	if err != nil {
		return nil, fmt.Errorf("integrations/%s: %w", part.Shipped, err)
	}
	out := &jnode{kind: jObject}
	for _, m := range part.members() {
		v := n.get(m)
		if v == nil {
			return nil, fmt.Errorf("integrations/%s has no member %q", part.Shipped, m)
		}
		out.set(m, v.clone())
	}
	if f == nil {
		return out, nil
	}
	if h := out.get(part.Hooks); h != nil {
		fillHooks(h, *f)
	}
	if s := out.get(part.Servers); s != nil && s.kind == jObject {
		for _, entry := range s.vals {
			fillServer(entry, *f, part.Workspace)
		}
	}
	return out, nil
}

// fillHooks fills every hook command under n: exec form (a command with args) by program, a
// shell command line word by word.
func fillHooks(n *jnode, f filler) {
	switch n.kind {
	case jArray:
		for _, e := range n.elems {
			fillHooks(e, f)
		}
	case jObject:
		cmd, isCmd := n.get("command").str()
		args := n.get("args")
		switch {
		case isCmd && args != nil:
			n.set("command", &jnode{kind: jScalar, raw: quoteJSON(f.exec(cmd))})
			for _, a := range args.elems {
				if s, ok := a.str(); ok {
					a.raw = quoteJSON(f.arg(s))
				}
			}
		case isCmd:
			n.set("command", &jnode{kind: jScalar, raw: quoteJSON(f.shell(cmd))})
		}
		for i, k := range n.keys {
			if k != "command" && k != "args" {
				fillHooks(n.vals[i], f)
			}
		}
	}
}

// fillServer fills an MCP server entry: its program, and how it names the project.
func fillServer(entry *jnode, f filler, workspace int) {
	if cmd, ok := entry.get("command").str(); ok {
		entry.set("command", &jnode{kind: jScalar, raw: quoteJSON(f.exec(cmd))})
	}
	args, ok := entry.get("args").strs()
	if !ok {
		return
	}
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--workspace" && i+1 < len(args) {
			switch workspace {
			case dropFlag:
				i++
				continue
			case nameRoot:
				out = append(out, a, f.root)
				i++
				continue
			}
		}
		out = append(out, f.arg(a))
	}
	n, _ := toJNode(out)
	entry.set("args", n)
}

// planJSON plans a JSON part. Setup owns two kinds of entry: the hooks that run agent-rewind's
// guard, and the MCP server named agent-rewind. Its own earlier ones are taken out (those still
// as it wrote them); any other of them (copied by hand from integrations/, edited since: the
// guard must not run twice per call) is replaced and recorded, for --remove to put back; then,
// unless removing, the shipped entries filled in are merged in. Everything else is the user's
// and stays as it is.
func planJSON(req Request, part Part, orig string, exists bool, rec *Record, p *planned) ([]byte, *Record, error) {
	tree, err := parseJSON([]byte(orig))
	if err != nil {
		return nil, nil, err
	}
	if tree.kind != jObject {
		return nil, nil, fmt.Errorf("it holds a JSON %s, where the client reads an object", map[jkind]string{jArray: "array", jScalar: "value"}[tree.kind])
	}
	work := tree.clone()
	next := &Record{}
	if req.Remove {
		removed, keptOld, err := unmerge(work, rec.JSON)
		if err != nil {
			return nil, nil, err
		}
		restored := putBack(work, rec.Replaced)
		p.change.Changes = append(netChanges(removed, nil), restored...)
		p.change.Kept = keptList(keptOld)
		return jsonResult(work, tree, exists, orig), next, nil
	}
	removed, keptOld, err := unmerge(work, rec.JSON)
	if err != nil {
		return nil, nil, err
	}
	// Containers setup made earlier that still hold something of the user's stay its own.
	for _, a := range rec.JSON {
		if a.Container != "" && work.at(a.Path) != nil {
			next.JSON = append(next.JSON, a)
		}
	}
	src, err := shippedEntries(part, &filler{req.Bin, req.Loc.Root})
	if err != nil {
		return nil, nil, err
	}
	replaced := takeOver(work, src, part)
	next.Replaced = append(append([]addition(nil), rec.Replaced...), replaced...)
	var adds []addition
	var keeps []kept
	merge(work, src, nil, &adds, &keeps)
	next.JSON = append(next.JSON, adds...)
	p.change.Changes = netChanges(removed, adds)
	for _, r := range replaced {
		p.change.Changes = append(p.change.Changes, Change{Op: "remove", At: r.where(), Value: r.Value + " (agent-rewind's, not setup's: replaced by setup's; --remove puts it back)"})
	}
	p.change.Kept = keptList(keptOld, keeps)
	return jsonResult(work, tree, exists, orig), next, nil
}

// jsonResult is the file's new content: the original bytes when nothing changed, nothing when
// a file that did not exist would be empty.
func jsonResult(work, tree *jnode, exists bool, orig string) []byte {
	switch {
	case exists && equal(work, tree):
		return []byte(orig)
	case !exists && work.empty():
		return nil
	}
	return work.encode()
}

// takeOver takes out of dst the entries setup owns that are not its own: in each hooks array the
// shipped file has, the elements that run agent-rewind's guard; among the servers, the one
// named as the shipped one. It returns them, to be put back by --remove.
func takeOver(dst, src *jnode, part Part) []addition {
	var out []addition
	if part.Hooks != "" {
		have, want := dst.get(part.Hooks), src.get(part.Hooks)
		for i, event := range want.keys {
			arr := have.get(event)
			if arr == nil || arr.kind != jArray || want.vals[i].kind != jArray {
				continue
			}
			var keep []*jnode
			for _, e := range arr.elems {
				if runsGuard(e) {
					out = append(out, addition{Path: []string{part.Hooks, event}, Elem: true, Value: e.compact()})
					continue
				}
				keep = append(keep, e)
			}
			arr.elems = keep
		}
	}
	if part.Servers != "" {
		have, want := dst.get(part.Servers), src.get(part.Servers)
		for _, name := range want.keys {
			if v := have.get(name); v != nil {
				out = append(out, addition{Path: []string{part.Servers, name}, Value: v.compact()})
				have.del(name)
			}
		}
	}
	return out
}

// runsGuard reports whether a hook entry (a group of hooks, or one) runs agent-rewind's guard.
func runsGuard(e *jnode) bool {
	if line, _ := commandLine(e); RunsGuard(line) {
		return true
	}
	if inner := e.get("hooks"); inner != nil && inner.kind == jArray {
		for _, h := range inner.elems {
			if line, _ := commandLine(h); RunsGuard(line) {
				return true
			}
		}
	}
	return false
}

// putBack puts back what setup replaced (--remove), making the containers on the way.
func putBack(root *jnode, replaced []addition) []Change {
	var out []Change
	for _, r := range replaced {
		v, err := parseJSON([]byte(r.Value))
		if err != nil || len(r.Path) == 0 {
			continue
		}
		parent := root
		for _, k := range r.Path[:len(r.Path)-1] {
			next := parent.get(k)
			if next == nil {
				next = &jnode{kind: jObject}
				parent.set(k, next)
			}
			parent = next
		}
		last := r.Path[len(r.Path)-1]
		if r.Elem {
			arr := parent.get(last)
			if arr == nil {
				arr = &jnode{kind: jArray}
				parent.set(last, arr)
			}
			if contains(arr, v) {
				continue
			}
			arr.elems = append(arr.elems, v)
		} else if parent.get(last) == nil {
			parent.set(last, v)
		} else {
			continue
		}
		out = append(out, Change{Op: "add", At: r.where(), Value: r.Value + " (put back: setup had replaced it)"})
	}
	return out
}

// netChanges lists what was taken out and added, leaving out an entry taken out and added again
// the same (a second setup with nothing new).
func netChanges(removed, added []addition) []Change {
	key := func(a addition) string { return a.where() + "\x00" + a.Container + "\x00" + a.Value }
	again := map[string]int{}
	for _, a := range added {
		again[key(a)]++
	}
	out := []Change{}
	cancelled := map[string]int{}
	for _, a := range removed {
		if again[key(a)] > 0 {
			again[key(a)]--
			cancelled[key(a)]++
			continue
		}
		if a.Container == "" {
			out = append(out, Change{Op: "remove", At: a.where(), Value: a.Value})
		}
	}
	for _, a := range added {
		if cancelled[key(a)] > 0 {
			cancelled[key(a)]--
			continue
		}
		if a.Container == "" {
			out = append(out, Change{Op: "add", At: a.where(), Value: a.Value})
		}
	}
	return out
}

func keptList(lists ...[]kept) []Kept {
	var out []Kept
	for _, l := range lists {
		for _, k := range l {
			out = append(out, Kept{At: k.At, Why: k.Why})
		}
	}
	return out
}

// planTOML plans a TOML part (Codex's config.toml): setup's earlier MCP table taken out when
// still as it wrote it; a [mcp_servers.agent-rewind] of another's (copied by hand) cut out with
// its sub-tables and recorded, for --remove to put back; then the shipped table appended with
// its command filled in.
func planTOML(req Request, part Part, orig string, rec *Record, p *planned) ([]byte, *Record, error) {
	if _, err := parseTOML(orig); err != nil {
		return nil, nil, err
	}
	text := orig
	next := &Record{}
	var removed []Block
	for _, b := range rec.Blocks {
		if b.Kind == "trust" || b.Kind == "replaced" && !req.Remove {
			next.Blocks = append(next.Blocks, b) // kept: a trusted hook's table (codextrust.go's), or one to put back
			continue
		}
		if b.Kind == "replaced" { // --remove: put it back
			text = appendBlock(text, b.Text)
			p.change.Changes = append(p.change.Changes, Change{Op: "add", At: firstHeader(b.Text), Value: b.Text + "(put back: setup had replaced it)"})
			continue
		}
		t, ok := removeBlock(text, b.Text)
		if !ok {
			p.change.Kept = append(p.change.Kept, Kept{At: firstHeader(b.Text), Why: "changed since setup added it: left as it is"})
			continue
		}
		text, removed = t, append(removed, b)
	}
	if req.Remove {
		if _, err := parseTOML(text); err != nil {
			return nil, nil, fmt.Errorf("putting back what setup replaced would not give valid TOML (%v): was the file edited?", err)
		}
		for _, b := range removed {
			p.change.Changes = append(p.change.Changes, Change{Op: "remove", At: firstHeader(b.Text), Value: b.Text})
		}
		next.Blocks = keepKind(next.Blocks, "trust")
		return []byte(text), next, nil
	}
	doc, headers, err := parseTOMLHeaders(text)
	if err != nil {
		return nil, nil, fmt.Errorf("taking setup's earlier table out leaves a file that is not TOML (%v): was it edited?", err)
	}
	table, err := shippedServerTable(part, filler{req.Bin, req.Loc.Root}, req.Client.Name)
	if err != nil {
		return nil, nil, err
	}
	if _, existing := canAppend(doc, table.keys); existing != nil {
		rest, cut, ok := cutTable(text, headers, table.keys)
		if !ok {
			return nil, nil, fmt.Errorf("[%s] is defined by dotted keys or an inline table, which setup cannot take out as text: write it as a [%s] table, or remove it", dottedTOML(table.keys), dottedTOML(table.keys))
		}
		text = rest
		next.Blocks = append(next.Blocks, Block{Kind: "replaced", Text: cut})
		p.change.Changes = append(p.change.Changes, Change{Op: "remove", At: "[" + dottedTOML(table.keys) + "]", Value: cut + "(agent-rewind's, not setup's: replaced by setup's; --remove puts it back)"})
		if doc, err = parseTOML(text); err != nil {
			return nil, nil, fmt.Errorf("taking [%s] out would not leave valid TOML (%v)", dottedTOML(table.keys), err)
		}
	}
	if why, _ := canAppend(doc, table.keys); why != "" {
		return nil, nil, fmt.Errorf("setup cannot add the table [%s]: %s", dottedTOML(table.keys), why)
	}
	block := table.text()
	text = appendBlock(text, block)
	if d, err := parseTOML(text); err != nil || d.lookup(table.keys...) == nil {
		return nil, nil, fmt.Errorf("appending [%s] would not give valid TOML (%v)", dottedTOML(table.keys), err)
	}
	next.Blocks = append(next.Blocks, Block{Kind: "mcp", Text: block})
	again := len(removed) == 1 && removed[0].Text == block
	for _, b := range removed {
		if !again {
			p.change.Changes = append(p.change.Changes, Change{Op: "remove", At: firstHeader(b.Text), Value: b.Text})
		}
	}
	if !again {
		p.change.Changes = append(p.change.Changes, Change{Op: "add", At: firstHeader(block), Value: block})
	}
	return []byte(text), next, nil
}

func keepKind(bs []Block, kind string) []Block {
	var out []Block
	for _, b := range bs {
		if b.Kind == kind {
			out = append(out, b)
		}
	}
	return out
}

// firstHeader is a block's table header ([mcp_servers.agent-rewind]).
func firstHeader(block string) string {
	for _, l := range strings.Split(block, "\n") {
		if strings.HasPrefix(l, "[") {
			return l
		}
	}
	return block
}

// shippedServerTable is the shipped config.toml's MCP server table, its command filled in.
func shippedServerTable(part Part, f filler, client string) (tomlTable, error) {
	src, err := shippedFile(part.Shipped)
	if err != nil {
		return tomlTable{}, err
	}
	doc, err := parseTOML(src)
	if err != nil {
		return tomlTable{}, fmt.Errorf("integrations/%s: %w", part.Shipped, err)
	}
	servers := doc.lookup(part.Servers)
	if servers == nil || servers.kind != tTable || len(servers.keys) != 1 {
		return tomlTable{}, fmt.Errorf("integrations/%s must hold one table under [%s]", part.Shipped, part.Servers)
	}
	keys := []string{part.Servers, servers.keys[0]}
	t, err := shippedTable(part.Shipped, keys, func(key string, v *tval) string {
		switch {
		case key == "command" && v.kind == tString:
			return tomlString(f.exec(v.str))
		case key == "args" && v.kind == tArray:
			args, _ := v.strs()
			parts := make([]string, len(args))
			for i, a := range args {
				parts[i] = tomlString(f.arg(a))
			}
			return "[" + strings.Join(parts, ", ") + "]"
		}
		return tomlText(v)
	})
	t.comment = "agent-rewind's MCP server, written by agent-rewind setup " + client + " (agent-rewind setup " + client + " --remove takes it out)"
	return t, err
}

// planScript plans a whole hook script (Cline's): written when absent, replaced when it is
// setup's earlier one or another script that runs agent-rewind's guard (copied by hand: kept
// for --remove to put back), and kept when it is the user's own (a client runs one script per
// event).
func planScript(req Request, part Part, orig string, exists bool, rec *Record, p *planned) ([]byte, *Record, error) {
	want, err := shippedScript(part, filler{req.Bin, req.Loc.Root}, req.Client.Name)
	if err != nil {
		return nil, nil, err
	}
	next := &Record{}
	ours := exists && rec.Script != "" && orig == rec.Script
	switch {
	case req.Remove && ours && rec.Original != "":
		p.change.Changes = append(p.change.Changes, Change{Op: "remove", At: "the file", Value: "the " + part.Event + " hook setup wrote, for the one it had replaced (put back)"})
		return []byte(rec.Original), next, nil
	case req.Remove && ours:
		p.change.Changes = append(p.change.Changes, Change{Op: "remove", At: "the file", Value: "the " + part.Event + " hook setup wrote"})
		return nil, next, nil
	case req.Remove && exists && rec.Script != "":
		p.change.Kept = append(p.change.Kept, Kept{At: "the file", Why: "changed since setup wrote it: left as it is"})
		return []byte(orig), next, nil
	case req.Remove:
		return []byte(orig), next, nil
	case exists && orig == want:
		next.Script, next.Mode, next.Created, next.Original = want, 0o755, rec.Created, rec.Original
		return []byte(orig), next, nil
	case ours:
		p.change.Changes = append(p.change.Changes, Change{Op: "remove", At: "the file", Value: "the " + part.Event + " hook an earlier setup wrote"})
		next.Original = rec.Original
	case exists && RunsGuard(orig):
		p.change.Changes = append(p.change.Changes, Change{Op: "remove", At: "the file", Value: "a " + part.Event + " hook that runs agent-rewind's guard, not setup's (replaced by setup's; --remove puts it back)"})
		next.Original = orig
	case exists:
		p.change.Kept = append(p.change.Kept, Kept{At: "the file", Why: "a " + part.Event + " hook of your own (Cline runs one script per event): kept as it is; to guard with it, end it with what setup would write:\n" + want})
		return []byte(orig), next, nil
	}
	p.change.Changes = append(p.change.Changes, Change{Op: "add", At: "the file", Value: "the " + part.Event + " hook of integrations/" + part.Shipped + ", with absolute paths"})
	next.Script, next.Mode = want, 0o755
	return []byte(want), next, nil
}

// shippedScript is a shipped hook script with its commands filled in: the shebang, a line
// saying where it comes from, then the script, comment lines as shipped.
func shippedScript(part Part, f filler, client string) (string, error) {
	src, err := shippedFile(part.Shipped)
	if err != nil {
		return "", err
	}
	lines := strings.Split(src, "\n")
	if !strings.HasPrefix(lines[0], "#!") {
		return "", fmt.Errorf("integrations/%s does not start with #!", part.Shipped)
	}
	out := []string{lines[0], "# Written by agent-rewind setup " + client + " from integrations/" + part.Shipped + ", with the programs'",
		"# absolute paths; agent-rewind setup " + client + " --remove takes it out."}
	for _, l := range lines[1:] {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			l = f.shell(l)
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n"), nil
}
