package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// straceRun runs the binary under strace, tracing renames and fsyncs with their paths (-y), and
// returns the trace.
func straceRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("strace"); err != nil {
		missing(t, "strace (apt-get install strace)")
	}
	trace := filepath.Join(t.TempDir(), "trace")
	cmd := exec.Command("strace", append([]string{"-f", "-y", "-qq", "-o", trace, "-e", "trace=rename,renameat,renameat2,fsync,fdatasync,syncfs", bin}, args...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		if strings.Contains(string(out), "ptrace") {
			missing(t, "permission to trace (ptrace): "+string(out))
		}
		t.Fatalf("strace %v: %v\n%s", args, err, out)
	}
	b, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestChainExportIsDurable(t *testing.T) {
	dir := t.TempDir()
	ok(t, dir, "checkpoint", "one")
	outDir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(outDir, "audit.tar")
	trace := straceRun(t, dir, "chain", "export", "--out", out)
	if left := unsyncedRenames(trace, outDir, func(string) bool { return false }, nil); len(left) > 0 {
		t.Fatalf("chain export renamed %v into place without syncing %s afterwards:\n%s", left, outDir, trace)
	}
}

// unsyncedRenames lists the renames in trace onto a path under root that no later fsync of the
// renamed file's directory covers, except for the names caches (which losing costs time, never
// data) may skip, and those that logged reports are in the store's commit log when the log was
// synced before the rename (snapshot/FORMAT.md, "Commit log": a restart writes them back).
func unsyncedRenames(trace, root string, cache func(name string) bool, logged func(target string) bool) []string {
	// Threads' calls may be split over "<unfinished ...>" and "resumed" lines: match the call's start.
	rename := regexp.MustCompile(`rename(?:at2?)?\(.*"([^"]+)"`)
	dirSync := regexp.MustCompile(`f(?:data)?sync\(\d+<([^>]+)>`)
	pending := map[string][]string{} // directory -> renamed targets waiting for its fsync
	logSynced := false
	for _, line := range strings.Split(trace, "\n") {
		if m := rename.FindStringSubmatch(line); m != nil {
			target := m[1]
			if logSynced && logged != nil && logged(target) {
				continue
			}
			if strings.HasPrefix(target, root+string(filepath.Separator)) && !cache(filepath.Base(target)) {
				pending[filepath.Dir(target)] = append(pending[filepath.Dir(target)], target)
			}
		} else if m := dirSync.FindStringSubmatch(line); m != nil {
			if m[1] == filepath.Join(root, "log") && logged != nil {
				logSynced = true // it covers what was renamed before it too: its record holds them
				for d, targets := range pending {
					pending[d] = slices.DeleteFunc(targets, logged)
				}
			}
			delete(pending, m[1])
		} else if strings.Contains(line, "syncfs(") {
			clear(pending) // the whole file system (the store is on one)
		}
	}
	var left []string
	for _, targets := range pending { // a directory left with no target is not listed
		left = append(left, targets...)
	}
	return left
}

// TestStoreRenamesAreSynced traces a checkpoint after a change and a rewind: every file they
// rename into the store must have its directory synced afterwards, or (a checkpoint's files on
// Linux) be held whole in the commit log, synced before the rename.
func TestStoreRenamesAreSynced(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.txt"), "one", 0o644)
	one := jsonOK[checkpointOut](t, dir, "checkpoint", "one")
	state, err := filepath.EvalSymlinks(stateDir(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	cache := func(name string) bool { return name == "index" || name == "index-log" }
	write(t, filepath.Join(dir, "a.txt"), "two", 0o644)
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "sub", "b.txt"), "new", 0o644)
	for _, args := range [][]string{{"checkpoint", "two"}, {"rewind", one.ID}} {
		trace := straceRun(t, dir, args...)
		// The log as the command left it: a rewind empties it first (settles it), a checkpoint
		// appends its record, which names each file (with its whole content) as plain bytes.
		log, _ := os.ReadFile(filepath.Join(state, "log"))
		logged := func(target string) bool {
			rel, err := filepath.Rel(state, target)
			return err == nil && filepath.IsLocal(rel) && bytes.Contains(log, []byte(filepath.ToSlash(rel)))
		}
		if left := unsyncedRenames(trace, state, cache, logged); len(left) > 0 {
			t.Errorf("%v renamed into the store without syncing their directory afterwards: %v", args, left)
		}
		if args[0] == "checkpoint" && runtime.GOOS == "linux" && !strings.Contains(trace, "fdatasync(") {
			t.Errorf("the checkpoint did not sync the commit log:\n%s", trace)
		}
	}
	if got := readFile(t, filepath.Join(dir, "a.txt")); got != "one" {
		t.Fatalf("after the rewind a.txt holds %q", got)
	}
}
