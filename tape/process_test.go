package tape

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The tests in this file run real child processes: the test binary re-executed with TAPE_HELPER
// naming what the child does (see runHelper). Children talk back one line per event on stdout.

func TestMain(m *testing.M) {
	if mode := os.Getenv("TAPE_HELPER"); mode != "" {
		os.Exit(runHelper(mode))
	}
	// A race-enabled child sleeps a second at exit (GORACE's atexit_sleep_ms) unless told not to.
	if _, set := os.LookupEnv("GORACE"); !set {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	os.Exit(m.Run())
}

// runHelper is the child's side. Environment: TAPE_DIR (storage directory), TAPE_EPOCH,
// TAPE_CURSOR, TAPE_TO (replay: stop before this position).
func runHelper(mode string) int {
	ctx := context.Background()
	tp, err := Open(ctx, Options{Dir: os.Getenv("TAPE_DIR"), Tenant: "acme", Key: testKey})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	defer tp.Close()
	epoch := os.Getenv("TAPE_EPOCH")
	switch mode {
	case "hold-recorder", "hold-cursor":
		var h interface{ Close() error }
		if mode == "hold-recorder" {
			h, err = tp.Recorder(epoch)
		} else {
			h, err = tp.Cursor(epoch, os.Getenv("TAPE_CURSOR"))
		}
		if err != nil {
			fmt.Printf("error: conflict=%v: %v\n", errors.Is(err, ErrConflict), err)
			return 1
		}
		fmt.Println("ok")
		io.Copy(io.Discard, os.Stdin) // hold until the parent closes stdin
		h.Close()
		return 0
	case "record-loop":
		r, err := tp.Recorder(epoch)
		if err != nil {
			fmt.Println("error:", err)
			return 1
		}
		n, err := tp.Len(ctx, epoch)
		if err != nil {
			fmt.Println("error:", err)
			return 1
		}
		for ; ; n++ {
			pos, err := r.Record(ctx, call(int(n)))
			if err != nil {
				fmt.Println("error:", err)
				return 1
			}
			fmt.Println("committed", pos) // only after Record returned: the parent counts on it
		}
	case "replay":
		c, err := tp.Cursor(epoch, os.Getenv("TAPE_CURSOR"))
		if err != nil {
			fmt.Println("error:", err)
			return 1
		}
		to, _ := strconv.ParseInt(os.Getenv("TAPE_TO"), 10, 64)
		p, err := c.Position(ctx)
		if err != nil {
			fmt.Println("error:", err)
			return 1
		}
		for ; p < to; p++ {
			got, err := c.Next(ctx, fmt.Sprint("call-", p), req(int(p)))
			if err != nil {
				fmt.Println("error:", err)
				return 1
			}
			if got.Position != p || string(got.Response.Body) != string(resp(int(p)).Body) {
				fmt.Printf("error: call %d served position %d %q\n", p, got.Position, got.Response.Body)
				return 1
			}
			fmt.Println("served", p)
		}
		return 0
	}
	fmt.Println("error: unknown helper mode", mode)
	return 2
}

// child is a running helper process.
type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines *bufio.Scanner
}

func startChild(t *testing.T, mode, dir string, env ...string) *child {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{"TAPE_HELPER=" + mode, "TAPE_DIR=" + dir}, env...)...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, stdin: stdin, lines: bufio.NewScanner(stdout)}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return c
}

// line returns the child's next line, or "" at EOF.
func (c *child) line() string {
	if c.lines.Scan() {
		return c.lines.Text()
	}
	return ""
}

func TestSecondWriterInAnotherProcessIsRefused(t *testing.T) {
	dir := t.TempDir()
	openTest(t, dir).Close() // create the store first, so the child only opens it

	holder := startChild(t, "hold-recorder", dir, "TAPE_EPOCH=e1")
	if l := holder.line(); l != "ok" {
		t.Fatalf("child: %q", l)
	}
	tp := openTest(t, dir)
	_, err := tp.Recorder("e1")
	if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), "e1.record") {
		t.Fatalf("recorder while another process records: %v, want ErrConflict naming the lock", err)
	}
	// Other epochs are free, and recording does not block replay of the same epoch.
	if r, err := tp.Recorder("e2"); err != nil {
		t.Fatal(err)
	} else {
		r.Close()
	}
	if c, err := tp.Cursor("e1", "c"); err != nil {
		t.Fatal(err)
	} else {
		c.Close()
	}
	// Once the holder exits, the epoch can be recorded again.
	holder.stdin.Close()
	if err := holder.cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	r, err := tp.Recorder("e1")
	if err != nil {
		t.Fatalf("recorder after the other process exited: %v", err)
	}
	defer r.Close()

	// The other way round: this process holds the epoch, a child is refused.
	refused := startChild(t, "hold-recorder", dir, "TAPE_EPOCH=e1")
	if l := refused.line(); !strings.HasPrefix(l, "error: conflict=true") {
		t.Fatalf("child recorder while this process records: %q", l)
	}
	// Cursors too.
	cur, _ := tp.Cursor("e1", "review-1")
	defer cur.Close()
	refused = startChild(t, "hold-cursor", dir, "TAPE_EPOCH=e1", "TAPE_CURSOR=review-1")
	if l := refused.line(); !strings.HasPrefix(l, "error: conflict=true") {
		t.Fatalf("child cursor while this process holds it: %q", l)
	}
}

func TestCursorResumesInAnotherProcess(t *testing.T) {
	dir := t.TempDir()
	tp := openTest(t, dir)
	recordN(t, tp, "e1", 6)
	tp.Close()

	c := startChild(t, "replay", dir, "TAPE_EPOCH=e1", "TAPE_CURSOR=review-1", "TAPE_TO=3")
	for i := range 3 {
		if l := c.line(); l != fmt.Sprint("served ", i) {
			t.Fatalf("child: %q", l)
		}
	}
	if err := c.cmd.Wait(); err != nil {
		t.Fatal(err)
	}

	tp = openTest(t, dir)
	cur, err := tp.Cursor("e1", "review-1")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if p, err := cur.Position(ctx); err != nil || p != 3 {
		t.Fatalf("Position = %d, %v; want 3", p, err)
	}
	// The child's last call, retried here, is the same response and consumes nothing.
	got, err := cur.Next(ctx, "call-2", req(2))
	wantServed(t, got, err, 2)
	if !got.Retried {
		t.Fatal("retry of the child's call was not marked Retried")
	}
	for i := 3; i < 6; i++ {
		got, err := cur.Next(ctx, fmt.Sprint("call-", i), req(i))
		wantServed(t, got, err, i)
	}
}

// crashTrials is how many children the crash tests kill; TAPE_CRASH_TRIALS raises it.
func crashTrials() int {
	if v, err := strconv.Atoi(os.Getenv("TAPE_CRASH_TRIALS")); err == nil && v > 0 {
		return v
	}
	if testing.Short() {
		return 3
	}
	return 10
}

// killAfter reads the child's lines until it has seen n of them, waits up to 2 ms more (so the
// kill lands anywhere in the next commit), SIGKILLs it, and returns every line it printed.
func killAfter(t *testing.T, c *child, n int, rng *rand.Rand) []string {
	t.Helper()
	var lines []string
	for len(lines) < n {
		l := c.line()
		if l == "" {
			t.Fatalf("child ended early after %q", lines)
		}
		lines = append(lines, l)
	}
	time.Sleep(time.Duration(rng.IntN(2000)) * time.Microsecond)
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for l := c.line(); l != ""; l = c.line() { // what it printed before it died
		lines = append(lines, l)
	}
	err := c.cmd.Wait()
	if ws, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("child was not killed: %v", err)
	}
	return lines
}

// TestKilledWhileRecording SIGKILLs a process that records in a loop, at random moments, and
// checks after each kill that every call the child was told about is there, that no partial
// record is visible, and that positions have no gap.
func TestKilledWhileRecording(t *testing.T) {
	dir := t.TempDir()
	openTest(t, dir).Close()
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 1))
	t.Logf("seed %d", seed)
	acked := int64(-1)
	for trial := range crashTrials() {
		c := startChild(t, "record-loop", dir, "TAPE_EPOCH=e1")
		for _, l := range killAfter(t, c, 1+rng.IntN(30), rng) {
			var pos int64
			if _, err := fmt.Sscanf(l, "committed %d", &pos); err != nil {
				t.Fatalf("trial %d: child: %q", trial, l)
			}
			if pos != acked+1 {
				t.Fatalf("trial %d: child acknowledged position %d after %d", trial, pos, acked)
			}
			acked = pos
		}

		tp := openTest(t, dir)
		n, err := tp.Verify(context.Background(), "e1")
		if err != nil {
			t.Fatalf("trial %d: after the kill: %v", trial, err)
		}
		if n < acked+1 || n > acked+2 {
			t.Fatalf("trial %d: %d calls after the kill; the child acknowledged positions up to %d", trial, n, acked)
		}
		for p := range n {
			e, err := tp.Entry(context.Background(), "e1", p)
			if err != nil || string(e.Call.Request.Body) != string(req(int(p)).Body) || string(e.Call.Response.Body) != string(resp(int(p)).Body) {
				t.Fatalf("trial %d: position %d holds %q, %q (%v)", trial, p, e.Call.Request.Body, e.Call.Response.Body, err)
			}
		}
		acked = n - 1 // a commit the child did not get to print is still a commit
		tp.Close()
	}
	t.Logf("%d calls recorded across %d kills", acked+1, crashTrials())
}

// TestKilledWhileReplaying SIGKILLs a process that replays with request ids, at random moments,
// and checks that the cursor never skips: the next call, retried with its id, is always served
// from the position right after the last one the child saw.
func TestKilledWhileReplaying(t *testing.T) {
	dir := t.TempDir()
	tp := openTest(t, dir)
	recordN(t, tp, "e1", 40*crashTrials())
	tp.Close()
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 2))
	t.Logf("seed %d", seed)
	ctx := context.Background()
	next := int64(0) // the next call the client has not seen an answer for
	for trial := range crashTrials() {
		c := startChild(t, "replay", dir, "TAPE_EPOCH=e1", "TAPE_CURSOR=review-1", fmt.Sprint("TAPE_TO=", 40*crashTrials()))
		for _, l := range killAfter(t, c, 1+rng.IntN(30), rng) {
			if l != fmt.Sprint("served ", next) {
				t.Fatalf("trial %d: child: %q, want served %d", trial, l, next)
			}
			next++
		}

		tp := openTest(t, dir)
		cur, err := tp.Cursor("e1", "review-1")
		if err != nil {
			t.Fatal(err)
		}
		pos, err := cur.Position(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if pos != next && pos != next+1 {
			t.Fatalf("trial %d: cursor at %d; the child saw answers up to %d", trial, pos, next-1)
		}
		// The client retries the call it did not see answered: same position either way.
		got, err := cur.Next(ctx, fmt.Sprint("call-", next), req(int(next)))
		wantServed(t, got, err, int(next))
		if got.Retried != (pos == next+1) {
			t.Fatalf("trial %d: Retried = %v with the cursor at %d for call %d", trial, got.Retried, pos, next)
		}
		next++
		tp.Close()
	}
}
