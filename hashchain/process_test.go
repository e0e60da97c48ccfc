package hashchain

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestMain doubles as a helper process: with HASHCHAIN_HELPER set, the test binary appends to a
// chain instead of running tests (real processes for the concurrency and crash tests).
func TestMain(m *testing.M) {
	if mode := os.Getenv("HASHCHAIN_HELPER"); mode != "" {
		os.Exit(helperMain(mode))
	}
	// A race-enabled child sleeps a second at exit (GORACE's atexit_sleep_ms) unless told not to.
	if _, set := os.LookupEnv("GORACE"); !set {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	code := m.Run()
	if bigChainDir != "" {
		os.RemoveAll(bigChainDir)
	}
	os.Exit(code)
}

// helperMain appends HASHCHAIN_COUNT entries (0: until killed) to HASHCHAIN_PATH and prints
// "ack <seq> <hash>" for each once Append returned.
func helperMain(mode string) int {
	opts := Options{Create: true, Anchor: os.Getenv("HASHCHAIN_ANCHOR")}
	if os.Getenv("HASHCHAIN_LATER") != "" {
		opts.SyncLater = helperGroupCommit()
	}
	c, err := Open(os.Getenv("HASHCHAIN_PATH"), opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 1
	}
	defer c.Close()
	count, _ := strconv.Atoi(os.Getenv("HASHCHAIN_COUNT"))
	id := os.Getenv("HASHCHAIN_ID")
	out := bufio.NewWriter(os.Stdout)
	for i := 0; count == 0 || i < count; i++ {
		e, err := c.Append("effect", map[string]any{"proc": id, "i": i, "pad": strings.Repeat("x", i%97)})
		if err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			return 1
		}
		fmt.Fprintf(out, "ack %d %s\n", e.Seq, e.Hash)
		if mode == "crash" {
			out.Flush() // the parent must see every acknowledgement before the kill
		}
	}
	out.Flush()
	return 0
}

// helperGroupCommit returns a SyncLater that runs the newest flush every few milliseconds, as
// a guard server's group commit does within its bound, so that a kill lands anywhere in one.
func helperGroupCommit() func(string, func() error) {
	var mu sync.Mutex
	pending := map[string]func() error{}
	go func() {
		for range time.Tick(3 * time.Millisecond) {
			mu.Lock()
			p := pending
			pending = map[string]func() error{}
			mu.Unlock()
			for _, f := range p {
				if err := f(); err != nil {
					fmt.Fprintln(os.Stderr, "helper: flush:", err)
					os.Exit(1)
				}
			}
		}
	}()
	return func(key string, flush func() error) {
		mu.Lock()
		pending[key] = flush
		mu.Unlock()
	}
}

func helperCmd(t *testing.T, tc *testChain, mode, id string, count int) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "HASHCHAIN_HELPER="+mode, "HASHCHAIN_PATH="+tc.path, "HASHCHAIN_ANCHOR="+tc.anchor,
		"HASHCHAIN_ID="+id, "HASHCHAIN_COUNT="+strconv.Itoa(count))
	cmd.Stderr = os.Stderr
	return cmd
}

// TestConcurrentProcessAppends runs several processes appending to one chain at once: no entry
// is lost or interleaved, each process's entries keep their order, and the chain verifies.
func TestConcurrentProcessAppends(t *testing.T) {
	tc := newTestChain(t)
	const procs, each = 4, 40
	var cmds []*exec.Cmd
	for p := range procs {
		cmd := helperCmd(t, tc, "append", strconv.Itoa(p), each)
		cmd.Stdout = nil
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("helper: %v", err)
		}
	}
	c := tc.open(t)
	head, _ := c.Head()
	if head.Size != procs*each {
		t.Fatalf("chain has %d entries, want %d", head.Size, procs*each)
	}
	if _, err := VerifyFile(tc.path, VerifyOptions{Head: &head, ExactHead: true}); err != nil {
		t.Fatal(err)
	}
	next := map[string]int{}
	for seq := range head.Size {
		e, err := c.Entry(seq)
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			Proc string `json:"proc"`
			I    int    `json:"i"`
		}
		json.Unmarshal(e.Data, &d)
		if d.I != next[d.Proc] {
			t.Fatalf("entry %d is process %s's #%d, want #%d", seq, d.Proc, d.I, next[d.Proc])
		}
		next[d.Proc]++
	}
}

// TestCrashDuringAppends kills (SIGKILL) a process that appends in a loop, at varying moments:
// every entry it acknowledged is on the chain with the hash it was given, and the chain opens
// and verifies (or reports a torn tail, which recovery moves aside).
func TestCrashDuringAppends(t *testing.T) { crashDuringAppends(t, false) }

// TestCrashDuringDeferredAppends is the same with the sidecar and anchor left to a group
// commit (Options.SyncLater), killed anywhere in an append or a flush: the anchor that lags
// is no alarm, and nothing acknowledged is lost.
func TestCrashDuringDeferredAppends(t *testing.T) { crashDuringAppends(t, true) }

func crashDuringAppends(t *testing.T, later bool) {
	tc := newTestChain(t)
	acked := map[int64]string{}
	trials := 6
	if testing.Short() {
		trials = 2
	}
	for trial := range trials {
		cmd := helperCmd(t, tc, "crash", strconv.Itoa(trial), 0)
		if later {
			cmd.Env = append(cmd.Env, "HASHCHAIN_LATER=1")
		}
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		want := 3 + trial*7
		for n := 0; n < want && sc.Scan(); n++ {
			f := strings.Fields(sc.Text())
			seq, _ := strconv.ParseInt(f[1], 10, 64)
			acked[seq] = f[2]
		}
		time.Sleep(time.Duration(trial) * time.Millisecond) // kill at varying points of an append
		cmd.Process.Signal(syscall.SIGKILL)
		for sc.Scan() { // acknowledgements written before the kill landed
			f := strings.Fields(sc.Text())
			seq, _ := strconv.ParseInt(f[1], 10, 64)
			acked[seq] = f[2]
		}
		cmd.Wait()

		c, err := Open(tc.path, Options{Anchor: tc.anchor})
		if _, ok := err.(*TornError); ok {
			t.Logf("trial %d: torn tail, recovering: %v", trial, err)
			if _, err := Recover(tc.path, Options{Anchor: tc.anchor}); err != nil {
				t.Fatal(err)
			}
			c, err = Open(tc.path, Options{Anchor: tc.anchor})
		}
		if err != nil {
			t.Fatalf("trial %d: open after SIGKILL: %v", trial, err)
		}
		head, _ := c.Head()
		if _, err := VerifyFile(tc.path, VerifyOptions{Head: &head, ExactHead: true}); err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		for seq, hash := range acked {
			e, err := c.Entry(seq)
			if err != nil || e.Hash != hash {
				t.Fatalf("trial %d: acknowledged entry %d (%s) is gone or changed: %+v %v", trial, seq, hash, e, err)
			}
		}
		c.Close()
	}
}
