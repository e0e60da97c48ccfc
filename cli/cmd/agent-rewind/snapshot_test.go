package main

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// The checkpoint commands end to end: real workspaces changed by real shell commands (and real
// git), the real binary, and the chain verified at the end of every scenario.

// The --json shapes, as docs/checkpoints.md documents them.
type (
	cpOut struct {
		ID, Label, Kind, Parent, Manifest string
		Time                              time.Time
		Counts                            struct{ Files, Dirs, Symlinks, Skipped, Bytes int64 }
		NewObjects, Hashed                int
		NewBytes                          int64
		Skipped                           []struct{ Path, Reason string }
		Excluded                          []string
		ExcludedCount                     int
		ChainSeq                          int64
		Error                             string
		ExitCode                          int
	}
	entryOut struct {
		Path, Type, Blob, Target string
		Mode                     uint32
		Size                     int64
	}
	changeOut struct {
		Path, Kind string
		From, To   *entryOut
	}
	countsOut  struct{ Added, Modified, Deleted, Mode, Type int }
	restoreOut struct {
		Op, OpID, From, To, Safety string
		SafetyCreated, DryRun      bool
		Changes                    []changeOut
		Kept                       []struct{ Path, Reason string }
		Counts                     countsOut
		Undo                       string
		SafetyCheckpoint           *cpOut
		Error                      string
		ExitCode                   int
	}
	opOut       struct{ Op, From, To, Safety string }
	timelineOut struct {
		Checkpoints []cpOut
		Current     string
		Last        *opOut
	}
	diffOut struct {
		From, To string
		Changes  []changeOut
		Counts   countsOut
	}
	gcOut struct {
		DryRun                           bool
		Removed, Protected               []string
		Kept                             int
		ProtectedReasons                 []struct{ ID, Reason string }
		ManifestsRemoved, ObjectsRemoved int
		BytesFreed                       int64
	}
)

// tree is a workspace as a comparable map, path -> "f 0644 <sha256>", "d 0755", "l -> target"
// or "special": what "byte for byte" means here (paths, types, modes, contents, link targets).
type tree map[string]string

func readTree(t testing.TB, root string) tree {
	t.Helper()
	tr := tree{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			return nil
		}
		rel = filepath.ToSlash(rel)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			tr[rel] = "l -> " + target
		case fi.IsDir():
			tr[rel] = fmt.Sprintf("d %04o", fi.Mode().Perm())
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			tr[rel] = fmt.Sprintf("f %04o %x", fi.Mode().Perm(), sha256.Sum256(b))
		default:
			tr[rel] = "special"
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// treeDiff describes how got differs from want, "" when equal.
func treeDiff(want, got tree) string {
	var out []string
	for p, w := range want {
		if g, ok := got[p]; !ok {
			out = append(out, fmt.Sprintf("missing %s (want %s)", p, w))
		} else if g != w {
			out = append(out, fmt.Sprintf("%s: got %s, want %s", p, g, w))
		}
	}
	for p, g := range got {
		if _, ok := want[p]; !ok {
			out = append(out, fmt.Sprintf("extra %s (%s)", p, g))
		}
	}
	sort.Strings(out)
	if len(out) > 30 {
		out = append(out[:30], fmt.Sprintf("… and %d more", len(out)-30))
	}
	return strings.Join(out, "\n")
}

// needTool returns the path of an outside tool, or skips the test when it is missing, unless
// REWIND_CI=1 makes that a failure.
func needTool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("REWIND_CI") == "1" {
			t.Fatalf("%s is required under REWIND_CI=1 but is not on PATH", name)
		}
		t.Skipf("%s is not on PATH: skipping (REWIND_CI=1 makes this a failure)", name)
	}
	return p
}

// bash runs a script in dir with bash -euo pipefail (and git configured to ignore the user's
// settings), and returns its stdout.
func bash(t testing.TB, dir, script string) string {
	t.Helper()
	cmd := exec.Command(needTool(t, "bash"), "-euo", "pipefail", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("bash: %v\n%s%s\nscript:\n%s", err, out.String(), errb.String(), script)
	}
	return out.String()
}

// ok runs the binary and fails the test unless it exits 0.
func ok(t *testing.T, dir string, args ...string) result {
	t.Helper()
	r := run(t, dir, "", args...)
	if r.code != 0 {
		t.Fatalf("agent-rewind %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

// jsonOK runs the binary with --json, fails unless it exits 0, and decodes stdout into T.
func jsonOK[T any](t *testing.T, dir string, args ...string) T {
	t.Helper()
	return decode[T](t, ok(t, dir, append([]string{"--json"}, args...)...))
}

// hasMembers fails unless the JSON object in stdout has every named member.
func hasMembers(t *testing.T, stdout string, names ...string) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(stdout), &m); err != nil {
		t.Fatalf("not a JSON object: %v: %s", err, stdout)
	}
	for _, n := range names {
		if _, ok := m[n]; !ok {
			t.Fatalf("--json output has no %q member: %s", n, stdout)
		}
	}
}

// chainKinds verifies the workspace's chain with "chain verify" and returns its entries' kinds
// and data, in order.
func chainKinds(t *testing.T, dir string) ([]string, []map[string]any) {
	t.Helper()
	ok(t, dir, "chain", "verify")
	var kinds []string
	var data []map[string]any
	for _, e := range readChain(t, dir) {
		var d map[string]any
		if err := json.Unmarshal(e.Data, &d); err != nil {
			t.Fatalf("chain entry %d data %s: %v", e.Seq, e.Data, err)
		}
		kinds, data = append(kinds, e.Kind), append(data, d)
	}
	return kinds, data
}

func changeKinds(cs []changeOut) map[string]string {
	m := map[string]string{}
	for _, c := range cs {
		m[c.Path] = c.Kind
	}
	return m
}

// wantKinds fails unless every path in want changed with that kind.
func wantKinds(t *testing.T, what string, cs []changeOut, want map[string]string) {
	t.Helper()
	got := changeKinds(cs)
	for p, k := range want {
		if got[p] != k {
			t.Errorf("%s: %s changed as %q, want %q (all: %v)", what, p, got[p], k, got)
		}
	}
}

// The workspace every shell scenario starts from: files, an executable, a private file, a
// symlink, empty directories, a nested repository's .git, and a binary file.
const baseTree = `
mkdir -p src/pkg docs empty-a bin vendor/lib/.git/refs/heads
printf 'package main\n' > src/main.go
printf 'package pkg\n' > src/pkg/pkg.go
printf 'hello\n' > docs/readme.md
printf 'secret\n' > docs/private.txt && chmod 0600 docs/private.txt
printf '#!/bin/sh\necho hi\n' > bin/run.sh && chmod 0755 bin/run.sh
ln -s ../docs/readme.md src/link
printf 'ref: refs/heads/main\n' > vendor/lib/.git/HEAD
printf '1111111111111111111111111111111111111111\n' > vendor/lib/.git/refs/heads/main
printf 'package lib\n' > vendor/lib/lib.go
head -c 200000 /dev/urandom > blob.bin
`

// The changes an agent's bash might make, one of each kind a rewind must undo.
const shellChanges = `
printf 'package main // new\n' > src/new.go
rm docs/private.txt
mv src/main.go src/app.go
chmod 0644 bin/run.sh
chmod 0700 docs
ln -sfn ../bin/run.sh src/link
mkdir -p made/empty/dir
rmdir empty-a
printf '2222222222222222222222222222222222222222\n' > vendor/lib/.git/refs/heads/main
printf 'index' > vendor/lib/.git/index
printf 'changed\n' >> docs/readme.md
rm -r src/pkg && printf 'now a file\n' > src/pkg
dd if=/dev/urandom of=blob.bin bs=1024 count=8 seek=10 conv=notrunc status=none
`

func TestRewindUndoesShellChanges(t *testing.T) {
	dir := t.TempDir()
	bash(t, dir, baseTree)
	a := jsonOK[cpOut](t, dir, "checkpoint", "base")
	if len(a.ID) != 12 || a.Label != "base" || a.Kind != "normal" || a.Parent != "" || a.Counts.Files != 9 || a.Counts.Symlinks != 1 || a.NewObjects == 0 {
		t.Fatalf("checkpoint --json: %+v", a)
	}
	before := readTree(t, dir)
	bash(t, dir, shellChanges)
	after := readTree(t, dir)

	// diff: the checkpoint against the live workspace, every kind of change.
	want := map[string]string{
		"src/new.go": "added", "docs/private.txt": "deleted", "src/main.go": "deleted", "src/app.go": "added",
		"bin/run.sh": "mode", "docs": "mode", "src/link": "modified", "made": "added", "made/empty/dir": "added",
		"empty-a": "deleted", "vendor/lib/.git/refs/heads/main": "modified", "vendor/lib/.git/index": "added",
		"docs/readme.md": "modified", "src/pkg": "type", "src/pkg/pkg.go": "deleted", "blob.bin": "modified", "made/empty": "added",
	}
	r := ok(t, dir, "--json", "diff", a.ID)
	hasMembers(t, r.stdout, "from", "to", "changes", "counts")
	d := decode[diffOut](t, r)
	if got := changeKinds(d.Changes); !maps.Equal(got, want) {
		t.Fatalf("diff: changes %v\nwant %v", got, want)
	}
	if d.From != a.ID || d.To != "" || d.Counts != (countsOut{Added: 6, Modified: 4, Deleted: 4, Mode: 2, Type: 1}) {
		t.Fatalf("diff: from %q to %q, counts %+v", d.From, d.To, d.Counts)
	}
	r = ok(t, dir, "diff", a.ID[:6])
	for _, line := range []string{"added     src/new.go", "mode      bin/run.sh  (0755 -> 0644)", "type      src/pkg  (dir -> file)", "modified  src/link  (-> ../bin/run.sh, was -> ../docs/readme.md)"} {
		if !strings.Contains(r.stdout, line) {
			t.Errorf("diff text lacks %q:\n%s", line, r.stdout)
		}
	}

	// rewind --dry-run: the same changes, the other way round, and nothing touched.
	dry := jsonOK[restoreOut](t, dir, "rewind", "--dry-run", a.ID)
	if !dry.DryRun || dry.Safety != "" || dry.Undo != "" || len(dry.Changes) != len(d.Changes) {
		t.Fatalf("rewind --dry-run: %+v", dry)
	}
	wantKinds(t, "dry run", dry.Changes, map[string]string{"src/new.go": "deleted", "docs/private.txt": "added", "src/pkg": "type", "empty-a": "added"})
	r = ok(t, dir, "rewind", "--dry-run", a.ID)
	if !strings.Contains(r.stdout, "would change") || !strings.Contains(r.stdout, "dry run: nothing was changed") {
		t.Fatalf("rewind --dry-run text:\n%s", r.stdout)
	}
	if diff := treeDiff(after, readTree(t, dir)); diff != "" {
		t.Fatalf("rewind --dry-run changed the workspace:\n%s", diff)
	}
	if tl := jsonOK[timelineOut](t, dir, "list"); len(tl.Checkpoints) != 1 {
		t.Fatalf("rewind --dry-run made a checkpoint: %+v", tl)
	}

	// rewind, by a prefix: everything undone, the state left kept as a safety checkpoint.
	r = ok(t, dir, "--json", "rewind", a.ID[:5])
	hasMembers(t, r.stdout, "op", "opId", "from", "to", "safety", "safetyCreated", "dryRun", "changes", "counts", "undo", "elapsedMs", "safetyCheckpoint")
	rw := decode[restoreOut](t, r)
	if rw.Op != "rewind" || rw.To != a.ID || rw.From != a.ID || !rw.SafetyCreated || rw.Safety == "" || rw.Undo != "agent-rewind replay "+rw.Safety ||
		rw.SafetyCheckpoint == nil || rw.SafetyCheckpoint.Kind != "safety" || rw.Counts != dry.Counts {
		t.Fatalf("rewind --json: %+v", rw)
	}
	if diff := treeDiff(before, readTree(t, dir)); diff != "" {
		t.Fatalf("after rewind, the workspace differs from the checkpoint:\n%s", diff)
	}
	if d := jsonOK[diffOut](t, dir, "diff", a.ID); len(d.Changes) != 0 {
		t.Fatalf("diff after rewind: %+v", d.Changes)
	}

	// replay the safety checkpoint: forward to the state the rewind left, exactly.
	r = ok(t, dir, "replay", rw.Safety[:8])
	if !strings.Contains(r.stdout, "replayed to "+rw.Safety) || !strings.Contains(r.stdout, "undo: agent-rewind rewind "+a.ID) {
		t.Fatalf("replay text:\n%s", r.stdout)
	}
	if diff := treeDiff(after, readTree(t, dir)); diff != "" {
		t.Fatalf("after replay, the workspace differs from the state the rewind left:\n%s", diff)
	}
	if d := jsonOK[diffOut](t, dir, "diff", a.ID, rw.Safety); len(d.Changes) != len(dry.Changes) || d.To != rw.Safety {
		t.Fatalf("diff of two checkpoints: %d changes, want %d", len(d.Changes), len(dry.Changes))
	}

	// The timeline: the checkpoint and the safety checkpoint, its child; the position moved.
	r = ok(t, dir, "--json", "list")
	hasMembers(t, r.stdout, "checkpoints", "current", "last")
	tl := decode[timelineOut](t, r)
	if len(tl.Checkpoints) != 2 || tl.Current != rw.Safety || tl.Last == nil || tl.Last.Op != "replay" || tl.Last.To != rw.Safety {
		t.Fatalf("list --json: %+v", tl)
	}
	s := tl.Checkpoints[1]
	if s.ID != rw.Safety || s.Kind != "safety" || s.Parent != a.ID || s.Label != "before rewind to "+a.ID {
		t.Fatalf("safety checkpoint in the timeline: %+v", s)
	}
	r = ok(t, dir, "list")
	if !strings.Contains(r.stdout, "ID") || !strings.Contains(r.stdout, "@  "+rw.Safety) || strings.Contains(r.stdout, "|") {
		t.Fatalf("list on a pipe is plain lines, the current one marked:\n%s", r.stdout)
	}
	r = ok(t, dir, "list", "--graph")
	if !strings.Contains(r.stdout, "@  "+rw.Safety) || !strings.Contains(r.stdout, "*  "+a.ID) || !strings.Contains(r.stdout, "[safety]") {
		t.Fatalf("list --graph:\n%s", r.stdout)
	}

	kinds, _ := chainKinds(t, dir)
	if !slices.Equal(kinds, []string{"checkpoint", "checkpoint", "rewind", "replay"}) {
		t.Fatalf("chain kinds %v", kinds)
	}
}

// TestRewindUndoesGit: the workspace's own .git is captured, so commits, branch switches, a
// hard reset and a gc, all by the real git, are undone consistently with the files.
func TestRewindUndoesGit(t *testing.T) {
	needTool(t, "git")
	dir := t.TempDir()
	bash(t, dir, `
git init -q .
git symbolic-ref HEAD refs/heads/main
printf 'one\n' > f.txt
git add -A && git commit -qm one`)
	head := strings.TrimSpace(bash(t, dir, "git rev-parse HEAD"))
	a := jsonOK[cpOut](t, dir, "checkpoint", "one commit")
	before := readTree(t, dir)
	bash(t, dir, `
git checkout -qb feature
printf 'two\n' > f.txt && printf 'g\n' > g.txt
git add -A && git commit -qm two
git checkout -q main
git merge -q --ff-only feature
git branch -qD feature
printf 'three\n' > f.txt && git commit -qam three
git reset -q --hard HEAD~1
git gc -q --prune=now`)
	if strings.TrimSpace(bash(t, dir, "git rev-parse HEAD")) == head {
		t.Fatal("the git commands did not move HEAD")
	}
	rw := jsonOK[restoreOut](t, dir, "rewind", a.ID)
	if diff := treeDiff(before, readTree(t, dir)); diff != "" {
		t.Fatalf("after rewind, the workspace (with .git) differs:\n%s", diff)
	}
	if got := strings.TrimSpace(bash(t, dir, "git rev-parse HEAD")); got != head {
		t.Fatalf("HEAD is %s after the rewind, want %s", got, head)
	}
	if st := bash(t, dir, "git status --porcelain && git fsck --no-progress 2>&1"); st != "" {
		t.Fatalf("git status/fsck after the rewind: %q", st)
	}
	ok(t, dir, "replay", rw.Safety)
	if got := bash(t, dir, "git log --format=%s"); got != "two\none\n" {
		t.Fatalf("git log after replay: %q", got)
	}
	chainKinds(t, dir)
}

// TestRewindIgnoreAndSpecialFiles: paths named by .rewindignore and a FIFO are reported by the
// checkpoint, never captured, and never touched by a rewind.
func TestRewindIgnoreAndSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	bash(t, dir, `
printf 'node_modules/\n*.log\n/secret.env\n' > .rewindignore
mkdir -p node_modules/pkg src
printf 'v1\n' > node_modules/pkg/index.js
printf 'log1\n' > app.log
printf 'KEY=1\n' > secret.env
printf 'package a\n' > src/a.go
mkfifo pipe`)
	r := ok(t, dir, "checkpoint", "with ignores")
	for _, s := range []string{"excluded by .rewindignore", "app.log", "node_modules", "secret.env", "pipe (fifo)", "1 skipped"} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("checkpoint text lacks %q:\n%s", s, r.stdout)
		}
	}
	id := strings.Fields(r.stdout)[1]
	tl := jsonOK[timelineOut](t, dir, "list")
	if tl.Current != id {
		t.Fatalf("checkpoint printed id %q, list says the current position is %q", id, tl.Current)
	}
	bash(t, dir, `
printf 'v2\n' > node_modules/pkg/index.js
mkdir -p node_modules/other && printf 'x\n' > node_modules/other/x.js
rm app.log && printf 'new\n' > new.log
printf 'KEY=2\n' > secret.env
printf 'package a // edited\n' > src/a.go
printf 'stray\n' > src/stray.go`)
	ignored := readTree(t, dir)
	c := jsonOK[cpOut](t, dir, "checkpoint")
	if c.ExcludedCount != 3 || !slices.Equal(c.Excluded, []string{"new.log", "node_modules", "secret.env"}) ||
		len(c.Skipped) != 1 || c.Skipped[0].Path != "pipe" || c.Skipped[0].Reason != "fifo" || c.Label != "" {
		t.Fatalf("checkpoint --json: excluded %v (%d), skipped %+v", c.Excluded, c.ExcludedCount, c.Skipped)
	}
	ok(t, dir, "rewind", id)
	got := readTree(t, dir)
	for _, p := range []string{"node_modules/pkg/index.js", "node_modules/other/x.js", "new.log", "secret.env", "pipe"} {
		if got[p] != ignored[p] {
			t.Errorf("rewind touched %s: %q, was %q", p, got[p], ignored[p])
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "app.log")); !os.IsNotExist(err) {
		t.Errorf("rewind brought back the excluded app.log (%v)", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "src/stray.go")); !os.IsNotExist(err) || !strings.Contains(got["src/a.go"], "f 0644") {
		t.Errorf("rewind did not restore src/: %v %q", err, got["src/a.go"])
	}
	chainKinds(t, dir)
}

// TestConcurrentCheckpointAndRewind runs one process rewinding back and forth between two
// states and one checkpointing, at once, on one workspace: the lock serialises them, so every
// checkpoint is exactly one of the two states, never a mix.
func TestConcurrentCheckpointAndRewind(t *testing.T) {
	dir := t.TempDir()
	// Big enough that a rewind between the two states takes a while: it rewrites every file.
	bash(t, dir, `for d in $(seq 0 14); do mkdir -p d$d; for f in $(seq 0 39); do printf 'file %s/%s\n' $d $f > d$d/f$f.txt; done; done`)
	a := jsonOK[cpOut](t, dir, "checkpoint", "A")
	bash(t, dir, `for f in d*/f*.txt; do printf 'changed\n' >> "$f"; done; rm d1/*; mkdir -p new/dir; printf 'x\n' > new/dir/x`)
	b := jsonOK[cpOut](t, dir, "checkpoint", "B")
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	loop := func(n int, args func(i int) []string) {
		defer wg.Done()
		for i := range n {
			cmd := exec.Command(bin, args(i)...)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				mu.Lock()
				failures = append(failures, fmt.Sprintf("%v: %v\n%s", args(i), err, out))
				mu.Unlock()
			}
		}
	}
	wg.Add(2)
	go loop(8, func(i int) []string { return []string{"rewind", []string{a.ID, b.ID}[i%2]} })
	go loop(12, func(i int) []string { return []string{"checkpoint", fmt.Sprint("loop ", i)} })
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("concurrent commands failed:\n%s", strings.Join(failures, "\n"))
	}
	tl := jsonOK[timelineOut](t, dir, "list")
	loops := 0
	for _, c := range tl.Checkpoints {
		if c.Manifest != a.Manifest && c.Manifest != b.Manifest {
			t.Fatalf("checkpoint %s (%s) captured a mix of the two states", c.ID, c.Label)
		}
		if strings.HasPrefix(c.Label, "loop ") {
			loops++
		}
	}
	if loops != 12 {
		t.Fatalf("%d loop checkpoints in the timeline, want 12", loops)
	}
	chainKinds(t, dir)
}

func TestSnapshotReadersNeedAWorkspace(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{{"list"}, {"diff", "abcd"}, {"rewind", "abcd"}, {"replay", "abcd"}, {"rewind", "--dry-run", "abcd"}, {"gc"}, {"check"}} {
		r := run(t, dir, "", args...)
		if r.code != 1 || !strings.Contains(r.stderr, "no agent-rewind state here") || !strings.Contains(r.stderr, `run "agent-rewind checkpoint" there first`) {
			t.Fatalf("%v without a store: exit %d, stderr %q", args, r.code, r.stderr)
		}
		r = run(t, dir, "", append([]string{"--json"}, args...)...)
		if e := decode[struct {
			Error    string
			ExitCode int
		}](t, r); r.code != 1 || e.ExitCode != 1 || !strings.Contains(e.Error, "no agent-rewind state here") {
			t.Fatalf("--json %v without a store: %d %q", args, r.code, r.stdout)
		}
		noWorkspace(t, dir)
	}
}

func TestSnapshotErrors(t *testing.T) {
	dir := t.TempDir()
	bash(t, dir, "printf 'a\\n' > a.txt")
	a := jsonOK[cpOut](t, dir, "checkpoint", "A")
	bash(t, dir, "printf 'b\\n' > a.txt")
	b := jsonOK[cpOut](t, dir, "checkpoint", "B")

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"rewind", "deadbeef"}, "no such checkpoint"},
		{[]string{"rewind", "xyz"}, "not a checkpoint id"},
		{[]string{"diff", a.ID, "0000aaaa"}, "no such checkpoint"},
		{[]string{"replay", a.ID}, "use rewind " + a.ID},
		{[]string{"replay", b.ID}, "already at " + b.ID},
		{[]string{"gc", "--keep-last=-1"}, "--keep-last -1"},
	} {
		r := run(t, dir, "", tc.args...)
		if r.code != 1 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 1 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	if r := run(t, dir, "", "gc", "--keep-within", "seven days"); r.code != 80 || !strings.Contains(r.stderr, "is not a duration") {
		t.Errorf("gc --keep-within 'seven days': %d %q", r.code, r.stderr)
	}

	// An ambiguous prefix lists the candidates. Two checkpoints whose ids share 4 hex digits:
	// metadata files made like the store makes them (the id is the SHA-256 of the bytes).
	meta := func(label string) ([]byte, string) {
		b := fmt.Appendf(nil, `{"format":1,"time":"2025-01-01T00:00:00Z","kind":"normal","label":%q,"parent":"","manifest":%q,"counts":{"files":1,"dirs":0,"symlinks":0,"skipped":0,"bytes":2}}`+"\n", label, a.Manifest)
		return b, fmt.Sprintf("%x", sha256.Sum256(b))[:12]
	}
	seen := map[string]string{}
	var prefix string
	for i := 0; prefix == ""; i++ {
		_, id := meta(fmt.Sprint("twin ", i))
		if other, dup := seen[id[:4]]; dup {
			for _, l := range []string{other, fmt.Sprint("twin ", i)} {
				data, id := meta(l)
				if err := os.WriteFile(filepath.Join(stateDir(t, dir), "checkpoints", id), data, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			prefix = id[:4]
		}
		seen[id[:4]] = fmt.Sprint("twin ", i)
	}
	r := run(t, dir, "", "rewind", prefix)
	if r.code != 1 || !strings.Contains(r.stderr, "is ambiguous") || strings.Count(r.stderr, "\n  "+prefix) != 2 || !strings.Contains(r.stderr, "twin ") {
		t.Fatalf("ambiguous prefix: exit %d, stderr %q", r.code, r.stderr)
	}
	r = run(t, dir, "", "--json", "diff", prefix)
	amb := decode[struct {
		Error      string
		ExitCode   int
		Candidates []struct{ ID, Label string }
	}](t, r)
	if r.code != 1 || amb.ExitCode != 1 || len(amb.Candidates) != 2 || !strings.HasPrefix(amb.Candidates[0].ID, prefix) || !strings.HasPrefix(amb.Candidates[1].Label, "twin ") {
		t.Fatalf("ambiguous prefix --json: %d %s", r.code, r.stdout)
	}
	chainKinds(t, dir)
}

// TestNotRecordedOnTheChain: a checkpoint made while the chain cannot be appended to (a torn
// last line) is saved and printed, and the command fails saying what to do; once a person has
// recovered the chain, the next writer records those checkpoints late, in order.
func TestNotRecordedOnTheChain(t *testing.T) {
	dir := t.TempDir()
	bash(t, dir, "printf 'a\\n' > a.txt")
	ok(t, dir, "checkpoint", "A")
	f, err := os.OpenFile(filepath.Join(stateDir(t, dir), "chain.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"seq":1,"ti`)
	f.Close()
	bash(t, dir, "printf 'b\\n' > a.txt")
	r := run(t, dir, "", "checkpoint", "B")
	if r.code != 1 || !strings.HasPrefix(r.stdout, "checkpoint ") || !strings.Contains(r.stderr, "not recorded on the chain") ||
		!strings.Contains(r.stderr, "saved and in effect") || !strings.Contains(r.stderr, "chain recover") {
		t.Fatalf("checkpoint with a torn chain: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	id := strings.Fields(r.stdout)[1]
	r = run(t, dir, "", "--json", "checkpoint", "C")
	c := decode[cpOut](t, r)
	if r.code != 1 || c.ID == "" || c.ExitCode != 1 || !strings.Contains(c.Error, "not recorded on the chain") || strings.Count(r.stdout, `"error"`) != 1 {
		t.Fatalf("checkpoint --json with a torn chain: exit %d %s", r.code, r.stdout)
	}
	tl := jsonOK[timelineOut](t, dir, "list")
	if len(tl.Checkpoints) != 3 || tl.Checkpoints[1].ID != id || tl.Current != c.ID {
		t.Fatalf("the unrecorded checkpoints are not in the timeline: %+v", tl)
	}
	ok(t, dir, "chain", "recover")
	ok(t, dir, "rewind", id)
	// The first writer after the recovery records the two checkpoints late, before its own entry.
	kinds, data := chainKinds(t, dir)
	if !slices.Equal(kinds, []string{"checkpoint", "recover", "checkpoint", "checkpoint", "rewind"}) {
		t.Fatalf("chain kinds %v", kinds)
	}
	for i, want := range []string{id, c.ID} {
		if d := data[2+i]; d["id"] != want || d["recorded_late"] == nil {
			t.Fatalf("entry %d: %v, want checkpoint %s recorded late", 2+i, d, want)
		}
	}
}

// TestInterruptedRewindIsFinished: a journal left by a rewind that never finished (as a crash
// leaves it, format in snapshot/FORMAT.md) is finished by the next command, which says so.
func TestInterruptedRewindIsFinished(t *testing.T) {
	dir := t.TempDir()
	bash(t, dir, "mkdir -p d && printf 'a\\n' > d/a.txt && printf 'k\\n' > keep.txt")
	a := jsonOK[cpOut](t, dir, "checkpoint", "A")
	want := readTree(t, dir)
	bash(t, dir, "rm -r d && printf 'b\\n' > b.txt && chmod 0600 keep.txt")
	b := jsonOK[cpOut](t, dir, "checkpoint", "B")
	bash(t, dir, "mkdir d && printf 'half\\n' > d/a.txt") // the interrupted run had begun
	j := fmt.Sprintf(`{"format":1,"op":"rewind","opId":"00112233aabbccdd","from":%q,"to":%q,"safety":%q,"time":"2025-01-01T00:00:00Z"}`+"\n", b.ID, a.ID, b.ID)
	if err := os.WriteFile(filepath.Join(stateDir(t, dir), "journal"), []byte(j), 0o600); err != nil {
		t.Fatal(err)
	}
	r := ok(t, dir, "list")
	if !strings.Contains(r.stderr, "an interrupted rewind to "+a.ID) || !strings.Contains(r.stderr, "was finished") || !strings.Contains(r.stderr, "checkpoint "+b.ID) {
		t.Fatalf("list after an interrupted rewind: stderr %q", r.stderr)
	}
	if d := treeDiff(want, readTree(t, dir)); d != "" {
		t.Fatalf("recovery did not finish the rewind:\n%s", d)
	}
	if r := ok(t, dir, "list"); r.stderr != "" {
		t.Fatalf("the recovery is reported again: %q", r.stderr)
	}
	kinds, data := chainKinds(t, dir)
	last := data[len(data)-1]
	if kinds[len(kinds)-1] != "rewind" || last["recovered"] != true || last["opId"] != "00112233aabbccdd" || last["outcome"] != "completed" {
		t.Fatalf("chain after recovery: %v, last %v", kinds, last)
	}
}

func TestGCKeepsWhatUndoNeeds(t *testing.T) {
	dir := t.TempDir()
	var ids []string
	for i := range 4 {
		bash(t, dir, "head -c 5000 /dev/urandom > f.bin") // each checkpoint has its own content
		ids = append(ids, jsonOK[cpOut](t, dir, "checkpoint", fmt.Sprint("c", i)).ID)
	}
	bash(t, dir, "printf 'unsaved\\n' > u.txt")
	rw := jsonOK[restoreOut](t, dir, "rewind", ids[1])
	dry := jsonOK[gcOut](t, dir, "gc", "--keep-last", "1", "--dry-run")
	if !dry.DryRun || len(dry.Removed) != 3 || len(jsonOK[timelineOut](t, dir, "list").Checkpoints) != 5 {
		t.Fatalf("gc --dry-run: %+v", dry)
	}
	r := ok(t, dir, "--json", "gc", "--keep-last", "1")
	hasMembers(t, r.stdout, "dryRun", "removed", "kept", "protected", "protectedReasons", "manifestsRemoved", "objectsRemoved", "bytesFreed")
	g := decode[gcOut](t, r)
	// Kept: the newest (the safety checkpoint, which undoing the rewind restores) and the
	// current position; removed: the other three.
	if !slices.Equal(g.Removed, []string{ids[0], ids[2], ids[3]}) || g.Kept != 2 || len(g.ProtectedReasons) != 2 || g.BytesFreed == 0 {
		t.Fatalf("gc --keep-last 1: %+v", g)
	}
	reasons := map[string]string{}
	for _, p := range g.ProtectedReasons {
		reasons[p.ID] = p.Reason
	}
	if reasons[ids[1]] != "current position" || !strings.Contains(reasons[rw.Safety], "safety checkpoint of the last rewind") {
		t.Fatalf("protected reasons: %v", reasons)
	}
	if r := run(t, dir, "", "rewind", ids[3]); r.code != 1 || !strings.Contains(r.stderr, "no such checkpoint") {
		t.Fatalf("rewind to a removed checkpoint: %d %q", r.code, r.stderr)
	}
	ok(t, dir, "replay", rw.Safety)
	if got, err := os.ReadFile(filepath.Join(dir, "u.txt")); err != nil || string(got) != "unsaved\n" {
		t.Fatalf("undo after gc: %q %v", got, err)
	}
	r = ok(t, dir, "gc", "--keep-within", "7d")
	if !strings.Contains(r.stdout, "removed 0 checkpoints, kept 2") {
		t.Fatalf("gc --keep-within 7d:\n%s", r.stdout)
	}
	chainKinds(t, dir)
}
