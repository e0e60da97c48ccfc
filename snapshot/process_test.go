package snapshot

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/snapshot/internal/statcache"
)

// The tests below re-execute the test binary as a helper process, selected by this variable, so
// that locking and crash recovery are exercised by real processes and a real SIGKILL.
const helperEnv = "SNAPSHOT_TEST_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(helperMain(mode, os.Args[len(os.Args)-1]))
	}
	// A race-enabled child sleeps a second at exit (GORACE's atexit_sleep_ms) unless told not to.
	if _, set := os.LookupEnv("GORACE"); !set {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	os.Exit(m.Run())
}

// helperArgs is what a helper process is told, as JSON in its last argument.
type helperArgs struct {
	Root  string   `json:"root"`
	IDs   []string `json:"ids"`
	Times int      `json:"times"`
	Log   string   `json:"log"`   // file the helper's Recorder appends JSON lines to
	Start string   `json:"start"` // if set, wait until this file exists before starting
	Paths []string `json:"paths"` // "restore": the chosen paths
}

// fileRecorder appends each record to a file, one JSON line, synced: the chain as a killed
// process leaves it.
type fileRecorder struct{ name string }

func (r fileRecorder) Record(kind string, data any) (int64, error) {
	b, err := json.Marshal(map[string]any{"kind": kind, "data": data})
	if err != nil {
		return 0, err
	}
	f, err := os.OpenFile(r.name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if _, err := f.Write(append(b, '\n')); err != nil {
		return 0, err
	}
	return 0, f.Sync()
}

func helperMain(mode, arg string) int {
	var a helperArgs
	if err := json.Unmarshal([]byte(arg), &a); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 3
	}
	s, err := Open(a.Root, Options{Recorder: fileRecorder{a.Log}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper open:", err)
		return 1
	}
	for a.Start != "" {
		if _, err := os.Stat(a.Start); err == nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	switch mode {
	case "rewind":
		os.Stdout.Write([]byte("ready\n"))
		if _, err := s.Rewind(ctx, a.IDs[0], RestoreOptions{}); err != nil {
			fmt.Fprintln(os.Stderr, "helper rewind:", err)
			return 1
		}
	case "restore":
		os.Stdout.Write([]byte("ready\n"))
		if _, err := s.RestorePaths(ctx, a.IDs[0], a.Paths, RestoreOptions{}); err != nil {
			fmt.Fprintln(os.Stderr, "helper restore:", err)
			return 1
		}
	case "rewind-loop":
		for i := 0; i < a.Times; i++ {
			if _, err := s.Rewind(ctx, a.IDs[i%len(a.IDs)], RestoreOptions{}); err != nil {
				fmt.Fprintln(os.Stderr, "helper rewind:", err)
				return 1
			}
		}
	case "checkpoint":
		os.Stdout.Write([]byte("ready\n"))
		if _, err := s.Checkpoint(ctx, "helper"); err != nil {
			fmt.Fprintln(os.Stderr, "helper checkpoint:", err)
			return 1
		}
	case "checkpoint-loop":
		for i := 0; i < a.Times; i++ {
			if _, err := s.Checkpoint(ctx, fmt.Sprint("loop ", i)); err != nil {
				fmt.Fprintln(os.Stderr, "helper checkpoint:", err)
				return 1
			}
		}
	case "maintain":
		batchPacks = 4 // batches to be killed between
		os.Stdout.Write([]byte("ready\n"))
		if _, err := s.Maintain(ctx, MaintainOptions{Retention: &GCOptions{AutoKeepLast: a.Times}}); err != nil {
			fmt.Fprintln(os.Stderr, "helper maintain:", err)
			return 1
		}
	default:
		fmt.Fprintln(os.Stderr, "helper: unknown mode", mode)
		return 3
	}
	return 0
}

func helperCmd(t testing.TB, mode string, a helperArgs) *exec.Cmd {
	b, _ := json.Marshal(a)
	cmd := exec.Command(os.Args[0], "-test.run=^$", string(b))
	cmd.Env = append(os.Environ(), helperEnv+"="+mode)
	return cmd
}

// mutate changes a generated tree in every way a restore must undo.
func mutate(t testing.TB, root string, r *rand.Rand) {
	t.Helper()
	var files []string
	// The store's own files (.rewind/) are not the workspace's: slashes, so Windows paths match.
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && !strings.Contains(filepath.ToSlash(p), "/.rewind/") {
			files = append(files, p)
		}
		return nil
	})
	for i, p := range files {
		switch r.IntN(6) {
		case 0:
			os.WriteFile(p, []byte(fmt.Sprintf("rewritten %d %d\n", i, r.Uint64())), 0o644)
		case 1:
			os.Remove(p)
		case 2:
			os.Chmod(p, 0o700)
		case 3:
			os.WriteFile(p+".new", []byte("added"), 0o644)
		}
	}
	os.MkdirAll(filepath.Join(root, "zz/new/empty"), 0o755)
	os.Symlink("nowhere", filepath.Join(root, "zz/new/link"))
}

// TestKillDuringRewind SIGKILLs a real rewind at random moments. After Open recovers, the
// workspace must equal the state before the rewind or the target, byte for byte, never a mix;
// and the chain must agree: a rewind entry exists exactly when the workspace is the target.
// 20 trials here; REWIND_SOAK=1 runs 100.
func TestKillDuringRewind(t *testing.T) {
	trials := 20
	if os.Getenv("REWIND_SOAK") == "1" {
		trials = 100
	} else if testing.Short() {
		trials = 5
	}
	killTrials(t, trials, 250)
}

func killTrials(t testing.TB, trials, files int) {
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	var window time.Duration // how long an unkilled rewind runs after "ready"; measured first
	var outcomes [2]int
	for trial := 0; trial < trials; trial++ {
		root := filepath.Join(tempDir(t), "ws")
		os.Mkdir(root, 0o755)
		genTreeMax(t, root, files, uint64(trial), 4000)
		s := mustOpen(t, root, Options{})
		a, err := s.Checkpoint(ctx, "A")
		if err != nil {
			t.Fatal(err)
		}
		stateA := readState(t, root)
		mutate(t, root, r)
		// Every third trial, a FIFO (a tool's pipe) where the target has a file: no rewind, killed
		// or not, may remove or replace it; the target state then has the FIFO at that path.
		var fifo string
		if trial%3 == 2 && runtime.GOOS != "windows" { // Windows has no FIFOs in a folder
			for p, v := range stateA {
				if strings.HasPrefix(v, "f ") && (fifo == "" || p < fifo) {
					fifo = p
				}
			}
			os.Remove(filepath.Join(root, fifo))
			mkfifo(t, filepath.Join(root, fifo), 0o644)
			stateA[fifo] = "special"
		}
		if trial%2 == 1 {
			if _, err := s.Checkpoint(ctx, "B"); err != nil { // else the rewind's safety checkpoint captures B
				t.Fatal(err)
			}
		}
		stateB := readState(t, root)
		log := filepath.Join(filepath.Dir(root), "chain.jsonl")
		cmd := helperCmd(t, "rewind", helperArgs{Root: root, IDs: []string{a.ID}, Log: log})
		delay := killHelper(t, cmd, trial, r, &window)
		// Recover, as the next command would.
		chain := &chainLog{}
		s2, err := Open(root, Options{Recorder: chain})
		if err != nil {
			t.Fatalf("trial %d (killed after %v): recovery failed: %v", trial, delay, err)
		}
		got := readState(t, root)
		if fifo != "" {
			if fi, err := os.Lstat(filepath.Join(root, fifo)); err != nil || fi.Mode().Type() != os.ModeNamedPipe {
				t.Fatalf("trial %d (killed after %v): the FIFO %s was touched: %v %v", trial, delay, fifo, fi, err)
			}
		}
		dA, dB := diffStates(stateA, got), diffStates(stateB, got)
		if dA != "" && dB != "" {
			t.Fatalf("trial %d (killed after %v): the workspace is a mix:\nvs target:\n%s\nvs before:\n%s", trial, delay, dA, dB)
		}
		if _, err := os.Lstat(filepath.Join(s2.StateDir(), "journal")); !os.IsNotExist(err) {
			t.Fatalf("trial %d: journal left after recovery", trial)
		}
		records := rewindRecords(t, log)
		for _, e := range chain.entries {
			if e.Kind == "rewind" && e.Data["to"] == a.ID {
				records++
			}
		}
		tl, err := s2.List()
		if err != nil {
			t.Fatal(err)
		}
		if dA == "" {
			outcomes[0]++
			if records == 0 || tl.Current != a.ID {
				t.Fatalf("trial %d: at the target but %d rewind records, position %s", trial, records, tl.Current)
			}
			// The safety checkpoint holds the state before the rewind, restorable.
			if tl.Last == nil {
				t.Fatalf("trial %d: no last operation", trial)
			}
			if _, err := s2.Rewind(ctx, tl.Last.Safety, RestoreOptions{}); err != nil {
				t.Fatal(err)
			}
			if d := diffStates(stateB, readState(t, root)); d != "" {
				t.Fatalf("trial %d: the safety checkpoint does not restore the state before the rewind:\n%s", trial, d)
			}
		} else {
			outcomes[1]++
			if records != 0 {
				t.Fatalf("trial %d: the workspace is the state before the rewind, but the chain has a rewind", trial)
			}
		}
		if d := cacheLies(t, s2); d != "" {
			t.Fatalf("trial %d (killed after %v): %s", trial, delay, d)
		}
	}
	t.Logf("%d trials (rewind window ~%v): %d ended at the target, %d at the state before", trials, window, outcomes[0], outcomes[1])
}

// cacheLies says how the stat cache s has (its log folded) vouches for something false, or "":
// every entry trusted, it must hold no stale or unstored entry, and a checkpoint taken with it
// must record the manifest that one reading every file records.
func cacheLies(t testing.TB, s *Store) string {
	t.Helper()
	backdateIndex(t, s)
	rep, err := s.Check(ctx, CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, sec := range rep.Sections {
		if sec.Name == "statCache" && len(sec.Problems) > 0 { // a killed write's leftovers are no lie
			return fmt.Sprintf("check: %+v", sec.Problems)
		}
	}
	cached, err := s.Checkpoint(ctx, "with the cache")
	if err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(s.StateDir(), "index")
	os.Remove(index)
	os.Remove(statcache.LogName(index))
	read, err := s.Checkpoint(ctx, "reading every file")
	if err != nil {
		t.Fatal(err)
	}
	if cached.Manifest != read.Manifest {
		d, _ := s.Diff(ctx, read.ID, cached.ID)
		return fmt.Sprintf("the stat cache made a checkpoint record what the workspace does not hold: %+v", d.Changes)
	}
	return ""
}

// TestKillDuringRestorePaths kills a restore of chosen paths at a random moment: the next Open
// must end with every chosen path restored and a "restore" entry, or with nothing changed and
// none; never some chosen paths restored and others not.
func TestKillDuringRestorePaths(t *testing.T) {
	trials := 12
	if testing.Short() {
		trials = 4
	}
	paths := []string{"d00/e00/f01", "d00/e00/f04", "d00/e00/f07/file00147.txt"}
	chosen := func(p string) bool {
		for _, q := range paths {
			if p == q || strings.HasPrefix(p, q+"/") {
				return true
			}
		}
		return false
	}
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 9))
	var window time.Duration
	var outcomes [2]int
	for trial := 0; trial < trials; trial++ {
		root := filepath.Join(tempDir(t), "ws")
		os.Mkdir(root, 0o755)
		genTreeMax(t, root, 250, uint64(trial), 4000)
		s := mustOpen(t, root, Options{})
		a, err := s.Checkpoint(ctx, "A")
		if err != nil {
			t.Fatal(err)
		}
		stateA := readState(t, root)
		mutate(t, root, r)
		stateB := readState(t, root)
		want := map[string]string{} // chosen paths as in A, the rest as before
		for p, v := range stateB {
			if !chosen(p) {
				want[p] = v
			}
		}
		for p, v := range stateA {
			if chosen(p) {
				want[p] = v
			}
		}
		log := filepath.Join(filepath.Dir(root), "chain.jsonl")
		cmd := helperCmd(t, "restore", helperArgs{Root: root, IDs: []string{a.ID}, Log: log, Paths: paths})
		delay := killHelper(t, cmd, trial, r, &window)
		chain := &chainLog{}
		s2, err := Open(root, Options{Recorder: chain})
		if err != nil {
			t.Fatalf("trial %d (killed after %v): recovery failed: %v", trial, delay, err)
		}
		got := readState(t, root)
		dWant, dB := diffStates(want, got), diffStates(stateB, got)
		if dWant != "" && dB != "" {
			t.Fatalf("trial %d (killed after %v): a mix:\nvs restored:\n%s\nvs before:\n%s", trial, delay, dWant, dB)
		}
		if _, err := os.Lstat(filepath.Join(s2.StateDir(), "journal")); !os.IsNotExist(err) {
			t.Fatalf("trial %d: journal left after recovery", trial)
		}
		b, _ := os.ReadFile(log)
		records := strings.Count(string(b), `"kind":"restore"`)
		for _, e := range chain.entries {
			if e.Kind == "restore" && e.Data["checkpoint"] == a.ID && e.Data["outcome"] == "completed" {
				records++
			}
		}
		tl, err := s2.List()
		if err != nil {
			t.Fatal(err)
		}
		if tl.Current != a.ID && dWant == "" && dB != "" {
			t.Fatalf("trial %d: the position moved to %s (want %s): a restore of paths keeps it", trial, tl.Current, a.ID)
		}
		switch {
		case dB == "" && dWant != "":
			outcomes[1]++
			if records != 0 {
				t.Fatalf("trial %d: nothing restored, but the chain has a restore", trial)
			}
		case dWant == "":
			outcomes[0]++
			if records == 0 && dB != "" {
				t.Fatalf("trial %d: the paths are restored but the chain has no restore entry", trial)
			}
		}
		if _, err := s2.Checkpoint(ctx, "after"); err != nil {
			t.Fatalf("trial %d: checkpoint after recovery: %v", trial, err)
		}
	}
	t.Logf("%d trials (restore window ~%v): %d restored, %d as before", trials, window, outcomes[0], outcomes[1])
}

func rewindRecords(t testing.TB, log string) int {
	b, err := os.ReadFile(log)
	if os.IsNotExist(err) {
		return 0
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if strings.Contains(line, `"kind":"rewind"`) {
			n++
		}
	}
	return n
}

// tempDir is t.TempDir for benchmarks too.
func tempDir(t testing.TB) string { return t.TempDir() }

// TestConcurrentProcessesSerialise runs a process that rewinds back and forth between two states
// and one that checkpoints in a loop, on one workspace. Without the lock a checkpoint would walk
// the tree in the middle of a restore and capture a mix; with it, every checkpoint is one state.
func TestConcurrentProcessesSerialise(t *testing.T) {
	root := filepath.Join(t.TempDir(), "ws")
	os.Mkdir(root, 0o755)
	genTreeMax(t, root, 400, 1, 4000)
	s := mustOpen(t, root, Options{})
	a, _ := s.Checkpoint(ctx, "A")
	mutate(t, root, rand.New(rand.NewPCG(1, 2)))
	b, _ := s.Checkpoint(ctx, "B")
	log := filepath.Join(filepath.Dir(root), "chain.jsonl")
	start := filepath.Join(filepath.Dir(root), "start")
	rw := helperCmd(t, "rewind-loop", helperArgs{Root: root, IDs: []string{a.ID, b.ID}, Times: 10, Log: log, Start: start})
	cp := helperCmd(t, "checkpoint-loop", helperArgs{Root: root, Times: 16, Log: log, Start: start})
	var wg sync.WaitGroup
	errs := make([]error, 2)
	outs := make([][]byte, 2)
	for i, c := range []*exec.Cmd{rw, cp} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i], errs[i] = c.CombinedOutput()
		}()
	}
	time.Sleep(200 * time.Millisecond) // both helpers are waiting: start them together
	os.WriteFile(start, nil, 0o600)
	wg.Wait()
	for i := range errs {
		if errs[i] != nil {
			t.Fatalf("helper %d: %v\n%s", i, errs[i], outs[i])
		}
	}
	tl, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, c := range tl.Checkpoints {
		switch c.Manifest {
		case a.Manifest:
			counts["A"]++
		case b.Manifest:
			counts["B"]++
		default:
			t.Fatalf("checkpoint %s (%s) captured a mix of the two states", c.ID, c.Label)
		}
	}
	if len(tl.Checkpoints) < 18 {
		t.Fatalf("only %d checkpoints", len(tl.Checkpoints))
	}
	// The chain file was appended by both processes under the lock: each line is whole.
	data, _ := os.ReadFile(log)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	for i, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("chain line %d torn: %q", i, l)
		}
	}
	t.Logf("checkpoints of A: %d, of B: %d, chain lines: %s", counts["A"], counts["B"], strconv.Itoa(len(lines)))
}

// killHelper runs a helper process for one trial of a SIGKILL test, once it says it started:
// trial 0 runs it to the end (the calibration) and measures how long that takes (window); every
// later trial SIGKILLs it at a random moment of that window, stretched by a fifth, and returns
// when.
func killHelper(t testing.TB, cmd *exec.Cmd, trial int, r *rand.Rand, window *time.Duration) time.Duration {
	t.Helper()
	out, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		t.Fatalf("trial %d: helper did not start: %v %s", trial, err, stderr.String())
	}
	start := time.Now()
	if trial == 0 {
		err := cmd.Wait()
		*window = time.Since(start)
		if err != nil {
			t.Fatalf("calibration %v failed: %v\n%s", cmd.Args[1:], err, stderr.String())
		}
		return 0
	}
	delay := time.Duration(r.Int64N(int64(*window)*12/10 + 1))
	time.Sleep(delay)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	return delay
}
