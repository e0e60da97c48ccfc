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

// planJSON plans a JSON part: setup's earlier entries taken out (those still as it wrote them),
// then, unless removing, the shipped entries merged in.
func planJSON(req Request, part Part, orig string, exists bool, rec *Record, p *planned) ([]byte, *Record, error) {
	tree, err := parseJSON([]byte(orig))
	if err != nil {
		return nil, nil, err
	}
	if tree.kind != jObject {
		return nil, nil, fmt.Errorf("it holds a JSON %s, where the client reads an object", map[jkind]string{jArray: "array", jScalar: "value"}[tree.kind])
	}
	work := tree.clone()
	removed, keptOld, err := unmerge(work, rec.JSON)
	if err != nil {
		return nil, nil, err
	}
	next := &Record{}
	var adds []addition
	var keeps []kept
	if !req.Remove {
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
		copies, err := shippedEntries(part, nil)
		if err != nil {
			return nil, nil, err
		}
		p.change.Changes = append(p.change.Changes, dropCopies(work, copies, src, nil)...)
		merge(work, src, nil, &adds, &keeps)
		next.JSON = append(next.JSON, adds...)
	}
	p.change.Changes = append(netChanges(removed, adds), p.change.Changes...)
	p.change.Kept = keptList(keptOld, keeps)
	switch {
	case exists && equal(work, tree):
		return []byte(orig), next, nil
	case !exists && work.empty():
		return nil, next, nil
	}
	return work.encode(), next, nil
}

// dropCopies takes out of dst the entries that are the shipped ones as they are in
// integrations/ (copied by hand, as the docs said before setup existed): bare program names,
// the plugin's ${CLAUDE_PLUGIN_ROOT}, which Claude Code refuses outside a plugin. The filled-in
// entries setup then adds replace them; left beside them, the guard would run twice per call.
// copies and filled are the shipped members unfilled and filled.
func dropCopies(dst, copies, filled *jnode, path []string) []Change {
	var out []Change
	for i, k := range copies.keys {
		cv, fv, dv := copies.vals[i], filled.get(k), dst.get(k)
		if dv == nil || fv == nil || equal(cv, fv) {
			continue
		}
		p := append(append([]string(nil), path...), k)
		why := " (a copy of integrations/ by hand: setup's entry replaces it)"
		switch {
		case dv.kind == jObject && cv.kind == jObject && isContainer(cv):
			out = append(out, dropCopies(dv, cv, fv, p)...)
		case dv.kind == jArray && cv.kind == jArray:
			var keep []*jnode
			for _, e := range dv.elems {
				if contains(cv, e) && !contains(fv, e) {
					out = append(out, Change{Op: "remove", At: dotted(p) + "[]", Value: e.compact() + why})
					continue
				}
				keep = append(keep, e)
			}
			dv.elems = keep
		case equal(dv, cv):
			dst.del(k)
			out = append(out, Change{Op: "remove", At: dotted(p), Value: dv.compact() + why})
		}
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
// still as it wrote it, then the shipped [mcp_servers.<name>] table appended with its command
// filled in.
func planTOML(req Request, part Part, orig string, rec *Record, p *planned) ([]byte, *Record, error) {
	if _, err := parseTOML(orig); err != nil {
		return nil, nil, err
	}
	text := orig
	next := &Record{}
	var removed []Block
	for _, b := range rec.Blocks {
		if b.Kind != "mcp" {
			next.Blocks = append(next.Blocks, b) // a trusted hook's table: codextrust.go's
			continue
		}
		t, ok := removeBlock(text, b.Text)
		if !ok {
			p.change.Kept = append(p.change.Kept, Kept{At: firstHeader(b.Text), Why: "changed since setup added it: left as it is"})
			continue
		}
		text, removed = t, append(removed, b)
	}
	var added *Block
	if raw, err := shippedFile(part.Shipped); !req.Remove && err == nil && text == raw {
		// The shipped file copied as it is (as the docs said before setup): setup's table,
		// with the absolute path, replaces it.
		text = ""
		p.change.Changes = append(p.change.Changes, Change{Op: "remove", At: "the file's content", Value: "a copy of integrations/" + part.Shipped + " by hand: setup's table replaces it"})
	}
	doc, err := parseTOML(text)
	if err != nil {
		return nil, nil, fmt.Errorf("taking setup's earlier table out leaves a file that is not TOML (%v): was it edited?", err)
	}
	if !req.Remove {
		table, err := shippedServerTable(part, filler{req.Bin, req.Loc.Root}, req.Client.Name)
		if err != nil {
			return nil, nil, err
		}
		why, existing := canAppend(doc, table.keys)
		switch {
		case existing != nil:
			p.change.Kept = append(p.change.Kept, Kept{At: "[" + dottedTOML(table.keys) + "]", Why: "yours, kept as it is (setup would write:\n" + table.text() + ")"})
		case why != "":
			return nil, nil, fmt.Errorf("setup cannot add the table [%s]: %s", dottedTOML(table.keys), why)
		default:
			block := table.text()
			text = appendBlock(text, block)
			if d, err := parseTOML(text); err != nil || d.lookup(table.keys...) == nil {
				return nil, nil, fmt.Errorf("appending [%s] would not give valid TOML (%v)", dottedTOML(table.keys), err)
			}
			added = &Block{Kind: "mcp", Text: block}
			next.Blocks = append(next.Blocks, *added)
		}
	}
	for _, b := range removed {
		if added == nil || b.Text != added.Text {
			p.change.Changes = append(p.change.Changes, Change{Op: "remove", At: firstHeader(b.Text), Value: b.Text})
		}
	}
	if added != nil && !(len(removed) == 1 && removed[0].Text == added.Text) {
		p.change.Changes = append(p.change.Changes, Change{Op: "add", At: firstHeader(added.Text), Value: added.Text})
	}
	if req.Remove {
		next.Blocks = keepKind(next.Blocks, "trust")
	}
	if text == "" && orig == "" {
		return nil, next, nil
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
// setup's earlier one, and kept when it is the user's own (a client runs one script per event).
func planScript(req Request, part Part, orig string, exists bool, rec *Record, p *planned) ([]byte, *Record, error) {
	want, err := shippedScript(part, filler{req.Bin, req.Loc.Root}, req.Client.Name)
	if err != nil {
		return nil, nil, err
	}
	next := &Record{}
	ours := exists && rec.Script != "" && orig == rec.Script
	if raw, err := shippedFile(part.Shipped); err == nil && exists && orig == raw && !req.Remove {
		ours = true // the shipped script copied by hand, as the docs said before setup: replaced,
		next.Created = true // and --remove deletes setup's, as it would one it made
	}
	switch {
	case req.Remove && ours:
		p.change.Changes = append(p.change.Changes, Change{Op: "remove", At: "the file", Value: "the " + part.Event + " hook setup wrote"})
		return nil, next, nil
	case req.Remove && exists && rec.Script != "":
		p.change.Kept = append(p.change.Kept, Kept{At: "the file", Why: "changed since setup wrote it: left as it is"})
		return []byte(orig), next, nil
	case req.Remove || exists && orig == want:
		if exists && orig == want {
			next.Script, next.Mode, next.Created = want, 0o755, rec.Created
		}
		return []byte(orig), next, nil
	case ours:
		p.change.Changes = append(p.change.Changes, Change{Op: "remove", At: "the file", Value: "the " + part.Event + " hook an earlier setup wrote"})
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
