package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
	if left := unsyncedRenames(trace, outDir, func(string) bool { return false }); len(left) > 0 {
		t.Fatalf("chain export renamed %v into place without syncing %s afterwards:\n%s", left, outDir, trace)
	}
}

// unsyncedRenames lists the renames in trace onto a path under root that no later fsync of the
// renamed file's directory covers, except for the names caches (which losing costs time, never
// data) may skip.
func unsyncedRenames(trace, root string, cache func(name string) bool) []string {
	// Threads' calls may be split over "<unfinished ...>" and "resumed" lines: match the call's start.
	rename := regexp.MustCompile(`rename(?:at2?)?\(.*"([^"]+)"`)
	dirSync := regexp.MustCompile(`f(?:data)?sync\(\d+<([^>]+)>`)
	pending := map[string][]string{} // directory -> renamed targets waiting for its fsync
	for _, line := range strings.Split(trace, "\n") {
		if m := rename.FindStringSubmatch(line); m != nil {
			target := m[1]
			if strings.HasPrefix(target, root+string(filepath.Separator)) && !cache(filepath.Base(target)) {
				pending[filepath.Dir(target)] = append(pending[filepath.Dir(target)], target)
			}
		} else if m := dirSync.FindStringSubmatch(line); m != nil {
			delete(pending, m[1])
		} else if strings.Contains(line, "syncfs(") {
			clear(pending) // the whole file system (the store is on one)
		}
	}
	var left []string
	for _, targets := range pending {
		left = append(left, targets...)
	}
	return left
}

// TestStoreRenamesAreSynced traces a checkpoint after a change and a rewind: every file they
// rename into the store must have its directory synced afterwards.
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
		if left := unsyncedRenames(straceRun(t, dir, args...), state, cache); len(left) > 0 {
			t.Errorf("%v renamed into the store without syncing their directory afterwards: %v", args, left)
		}
	}
	if got := readFile(t, filepath.Join(dir, "a.txt")); got != "one" {
		t.Fatalf("after the rewind a.txt holds %q", got)
	}
}
