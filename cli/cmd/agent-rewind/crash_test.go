package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestKillDuringRewind SIGKILLs a real "agent-rewind rewind" at random moments, then runs
// "agent-rewind list", which finishes an interrupted rewind. The workspace must then equal,
// byte for byte (paths, types, modes, contents, link targets), either the state before the
// rewind or the target, never a mix; the chain must agree (a rewind entry exactly when the
// workspace is at the target) and verify; and the safety checkpoint must restore the state
// before the rewind. 5 trials (new random moments each run); REWIND_SOAK=1 runs 100. The workspace (2,000 files, a few MB
// of them changed) makes a rewind take long enough to be killed at many different points.
func TestKillDuringRewind(t *testing.T) {
	// One of the package's slowest (each process a -race binary): run beside the others' tail.
	t.Parallel()
	trials := 5
	if os.Getenv("REWIND_SOAK") == "1" {
		trials = 100
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 3))
	var window time.Duration // how long an uninterrupted rewind runs, measured by trial 0
	var atTarget, atBefore, recovered int
	for trial := range trials {
		dir := filepath.Join(t.TempDir(), "ws")
		genWorkspace(t, dir, 2000, r)
		a := jsonOK[cpOut](t, dir, "checkpoint", "A")
		stateA := readTree(t, dir)
		mutateWorkspace(t, dir, r)
		if trial%2 == 1 { // else the rewind's own safety checkpoint captures this state
			jsonOK[cpOut](t, dir, "checkpoint", "B")
		}
		stateB := readTree(t, dir)

		cmd := exec.Command(bin, "rewind", a.ID)
		cmd.Dir = dir
		delay := killTrial(t, cmd, trial, r, &window)
		_, err := os.Lstat(filepath.Join(stateDir(t, dir), "journal"))
		interrupted := err == nil

		// Any command finishes an interrupted rewind; list says so on stderr.
		l := ok(t, dir, "list")
		if interrupted != strings.Contains(l.stderr, "an interrupted rewind to "+a.ID) {
			t.Fatalf("trial %d (killed after %v): journal left %v, but list said %q", trial, delay, interrupted, l.stderr)
		}
		got := readTree(t, dir)
		dA, dB := treeDiff(stateA, got), treeDiff(stateB, got)
		if dA != "" && dB != "" {
			t.Fatalf("trial %d (killed after %v): the workspace is a mix:\nagainst the target:\n%s\nagainst the state before:\n%s", trial, delay, dA, dB)
		}
		_, data := chainKinds(t, dir) // verifies the chain too
		opIDs := map[any]bool{}
		for _, d := range data {
			if d["opId"] != nil && d["to"] == a.ID {
				opIDs[d["opId"]] = true
			}
		}
		tl := jsonOK[timelineOut](t, dir, "list")
		if dA == "" {
			atTarget++
			// A crash between the chain entry and the journal's removal records the same opId
			// twice (snapshot/FORMAT.md, "Journal"); never two different rewinds.
			if len(opIDs) != 1 || tl.Current != a.ID || tl.Last == nil {
				t.Fatalf("trial %d: at the target, but rewinds on the chain %v, position %s, last %+v", trial, opIDs, tl.Current, tl.Last)
			}
			if interrupted { // (an uninterrupted rewind's undo is tested elsewhere)
				ok(t, dir, "rewind", tl.Last.Safety)
				if d := treeDiff(stateB, readTree(t, dir)); d != "" {
					t.Fatalf("trial %d: the safety checkpoint %s does not restore the state before the rewind:\n%s", trial, tl.Last.Safety, d)
				}
				chainKinds(t, dir)
			}
		} else {
			atBefore++
			// (The position may still be A: a kill before the safety checkpoint of an
			// uncheckpointed state changes nothing at all.)
			if len(opIDs) != 0 || tl.Last != nil {
				t.Fatalf("trial %d: at the state before the rewind, but rewinds on the chain %v, last operation %+v", trial, opIDs, tl.Last)
			}
		}
		if interrupted {
			recovered++
		}
		os.RemoveAll(filepath.Dir(dir))
	}
	t.Logf("%d trials, an uninterrupted rewind taking %v: %d ended at the target, %d at the state before; %d were killed mid-restore and recovered",
		trials, window.Round(time.Millisecond), atTarget, atBefore, recovered)
}

// genWorkspace writes a tree of about n files (500 B to 3 KB each, in nested folders), some
// executables, symlinks and empty folders.
func genWorkspace(t *testing.T, root string, n int, r *rand.Rand) {
	t.Helper()
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("m%02d", i%25), fmt.Sprintf("p%d", i%7))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if i%50 == 0 {
			mode = 0o755
		}
		write(t, filepath.Join(dir, fmt.Sprintf("f%d.txt", i)), randomText(r, 500+r.IntN(2500)), mode)
		if i%100 == 0 {
			if err := os.Symlink(fmt.Sprintf("f%d.txt", i), filepath.Join(dir, fmt.Sprintf("link%d", i))); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(dir, fmt.Sprintf("empty%d", i)), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// mutateWorkspace changes a generated tree in every way a rewind must undo: about a third of
// the files rewritten (a few MB), some deleted, chmodded or joined by new ones, symlinks
// retargeted, empty folders removed and added, and a folder replaced by a file.
func mutateWorkspace(t *testing.T, root string, r *rand.Rand) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.Type()&os.ModeSymlink != 0:
			if r.IntN(2) == 0 {
				os.Remove(p)
				return os.Symlink("../elsewhere", p)
			}
		case d.IsDir() && strings.HasPrefix(d.Name(), "empty"):
			if r.IntN(2) == 0 {
				os.Remove(p)
				return filepath.SkipDir
			}
		case d.Type().IsRegular():
			switch x := r.IntN(20); {
			case x < 7:
				write(t, p, randomText(r, 1000+r.IntN(5000)), 0o644)
			case x < 9:
				return os.Remove(p)
			case x < 10:
				return os.Chmod(p, 0o700)
			case x < 11:
				write(t, p+".new", randomText(r, 200), 0o644)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if err := os.MkdirAll(filepath.Join(root, "zz", fmt.Sprintf("new%d", i), "empty"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.RemoveAll(filepath.Join(root, "m03", "p1")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "m03", "p1"), "a file where a folder was\n", 0o644)
}

func write(t *testing.T, name, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(name, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(name, mode); err != nil {
		t.Fatal(err)
	}
}

// randomText is n bytes of printable text.
func randomText(r *rand.Rand, n int) string {
	const letters = "abcdefghijklmnopqrstuvwxyz      \n"
	b := make([]byte, n)
	for i := range b {
		b[i] = letters[r.IntN(len(letters))]
	}
	return string(b)
}

// killTrial runs cmd for one trial of a SIGKILL test: trial 0 runs it to the end and measures
// how long it takes (window); every later trial SIGKILLs it at a random moment of that window,
// and returns when.
func killTrial(t *testing.T, cmd *exec.Cmd, trial int, r *rand.Rand, window *time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if trial == 0 {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("the uninterrupted %v failed: %v", cmd.Args[1:], err)
		}
		*window = time.Since(start)
		return 0
	}
	delay := time.Duration(r.Int64N(int64(*window) + 1))
	time.Sleep(delay)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	return delay
}
