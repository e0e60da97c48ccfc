package hookserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/barrier"
	"github.com/agent-rewind/rewind/cli/internal/hookwire"
	"github.com/agent-rewind/rewind/cli/internal/unixsock"
)

// serve runs a server in this process for a fresh state folder, without change watchers, and
// returns its socket.
func serve(t *testing.T, uid int) string {
	t.Helper()
	t.Setenv("REWIND_WATCH", "off")
	return serveWatched(t, uid)
}

// serveWatched is serve with the change watchers on: they run in the server (watch.InProcess).
func serveWatched(t testing.TB, uid int) string {
	t.Helper()
	state := t.TempDir()
	t.Setenv("REWIND_STATE_DIR", state)
	socket := filepath.Join(state, hookwire.Folder, "sock")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, Options{Socket: socket, UID: uid}) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		c, err := unixsock.Dial(socket, 5*time.Second)
		if err == nil {
			c.Close()
			return socket
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server does not listen: %v", err)
		}
	}
}

// ask sends req and returns every answer until the server closes the connection.
func ask(t testing.TB, socket string, req *hookwire.Request) []*hookwire.Answer {
	t.Helper()
	c, err := unixsock.Dial(socket, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(hookwire.AppendRequest(nil, req)); err != nil {
		if closedUnread(err) {
			return nil // closed before reading it all
		}
		t.Fatal(err)
	}
	var as []*hookwire.Answer
	for {
		p, err := hookwire.ReadMessage(c)
		if err == io.EOF || closedUnread(err) { // closed, unread or read
			return as
		}
		if err != nil {
			t.Fatalf("read an answer: %v", err)
		}
		a, err := hookwire.DecodeAnswer(p)
		if err != nil {
			t.Fatal(err)
		}
		as = append(as, a)
	}
}

// testUmask is read once, before any test runs: reading the umask sets it for a moment, and
// requests built by concurrent goroutines would otherwise see one another's zero.
var testUmask = readUmask()

// jsonString is s as a JSON string: a Windows path's backslashes escaped.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func guardRequest(dir, stdin string, args ...string) *hookwire.Request {
	return &hookwire.Request{Op: hookwire.OpGuard, Version: hookwire.Version(), Dir: dir, Umask: testUmask,
		StdinRead: true, Stdin: []byte(stdin), Args: args, Env: os.Environ()}
}

// TestCallsDoNotWaitForOthers: connections whose clients have sent nothing yet (each holds the
// goroutine that accepted it, up to readTimeout) do not hold up the next call: more goroutines
// accept when calls overlap.
func TestCallsDoNotWaitForOthers(t *testing.T) {
	socket := serve(t, 0)
	for range acceptors + 2 {
		c, err := unixsock.Dial(socket, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	c, err := unixsock.Dial(socket, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(readTimeout / 2)) // answered at once, or only when the others time out
	if _, err := c.Write(hookwire.AppendRequest(nil, &hookwire.Request{Op: hookwire.OpStatus})); err != nil {
		t.Fatal(err)
	}
	p, err := hookwire.ReadMessage(c)
	if err != nil {
		t.Fatalf("a status request behind %d silent connections: %v", acceptors+2, err)
	}
	if a, err := hookwire.DecodeAnswer(p); err != nil || a.Kind != hookwire.Result {
		t.Fatalf("status: %+v, %v", a, err)
	}
}

// TestConcurrentWorkspaces: guard calls for three workspaces at once, in one server process
// (go test -race checks hook.Guard shares nothing of a call): each answered, each admission
// recorded in its own workspace, relative paths taken from each call's own directory.
func TestConcurrentWorkspaces(t *testing.T) {
	socket := serve(t, 0)
	var roots []string
	for range 3 {
		root := t.TempDir()
		if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
		roots = append(roots, root)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 30)
	for i := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			root := roots[i%3]
			// A relative --workspace: "." of the call's directory.
			as := ask(t, socket, guardRequest(root, fmt.Sprintf(`{"key": "k%d", "payload": 1}`, i), "--workspace", ".", "--json", "guard"))
			if len(as) != 2 || as[0].Kind != hookwire.Accepted || as[1].Kind != hookwire.Result || as[1].Code != 0 {
				errs <- fmt.Sprintf("call %d: %d answers, last %+v", i, len(as), as[len(as)-1])
				return
			}
			if !strings.Contains(string(as[1].Stdout), fmt.Sprintf(`"key": "k%d"`, i)) {
				errs <- fmt.Sprintf("call %d: %s", i, as[1].Stdout)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	for _, root := range roots {
		as := ask(t, socket, guardRequest(root, `{"key": "k0", "payload": 1}`, "--json", "guard"))
		want := 0 // k0 was admitted in roots[0] only: refused there, new elsewhere
		if root == roots[0] {
			want = 2
		}
		if got := as[len(as)-1].Code; got != want {
			t.Errorf("%s: k0 again: exit %d, want %d: %s", root, got, want, as[len(as)-1].Stdout)
		}
	}
}

// TestFallBack: what the server does not serve it answers "fall back" without doing anything.
func TestFallBack(t *testing.T) {
	socket := serve(t, 0)
	dir := t.TempDir()
	in := `{"key": "k", "payload": 1}`
	for name, req := range map[string]*hookwire.Request{
		"environment": func() *hookwire.Request {
			r := guardRequest(dir, in, "--workspace", dir, "guard")
			r.Env = append(r.Env, "REWIND_AUTO_CHECKPOINT_LIMIT=1B")
			return r
		}(),
		"umask": func() *hookwire.Request {
			r := guardRequest(dir, in, "--workspace", dir, "guard")
			r.Umask ^= 0o7
			return r
		}(),
		"state-dir": guardRequest(dir, in, "--state-dir", t.TempDir(), "--workspace", dir, "guard"),
		"no stdin": func() *hookwire.Request {
			r := guardRequest(dir, in, "--workspace", dir, "guard")
			r.StdinRead = false
			return r
		}(),
		"no wd":      guardRequest("", in, "--workspace", dir, "guard"),
		"unknown op": {Op: "dance"},
	} {
		as := ask(t, socket, req)
		if len(as) != 1 || as[0].Kind != hookwire.FallBack {
			t.Errorf("%s: %d answers %+v, want one FallBack", name, len(as), as)
		}
	}
	as := ask(t, socket, guardRequest(dir, in, "--workspace", dir, "guard"))
	if n := len(as); n != 2 || as[1].Code != 0 {
		t.Fatalf("the key after the fall backs: %+v (it must be new: nothing was recorded)", as)
	}
	// A client of another build: fall back, and the server stops.
	r := guardRequest(dir, in, "--workspace", dir, "guard")
	r.Version = "v0.0.0-other"
	if as := ask(t, socket, r); len(as) != 1 || as[0].Kind != hookwire.FallBack || as[0].Code != hookwire.Restart {
		t.Fatalf("another build: %+v", as)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		c, err := unixsock.Dial(socket, 5*time.Second)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("the server still answers after a client of another build")
		}
	}
}

func TestEnvDiffers(t *testing.T) {
	own := readEnv([]string{"HOME=/h", "REWIND_WATCH=off", "PATH=/bin", "XDG_STATE_HOME=/x"})
	for env, want := range map[string]string{
		"HOME=/h REWIND_WATCH=off XDG_STATE_HOME=/x PATH=/usr/bin":                                  "",
		"HOME=/h REWIND_WATCH=off XDG_STATE_HOME=/x REWIND_HOOK_SERVER=on REWIND_HOOK_CLIENT=start": "",
		"HOME=/h REWIND_WATCH=off XDG_STATE_HOME=/x REWIND_AUTO_CHECKPOINT_LIMIT=off":               "REWIND_AUTO_CHECKPOINT_LIMIT",
		"HOME=/h XDG_STATE_HOME=/x":                                    "REWIND_WATCH",
		"HOME=/h REWIND_WATCH=off XDG_STATE_HOME=/x REWIND_STATE_DIR=": "",
		"HOME=/other REWIND_WATCH=off XDG_STATE_HOME=/x":               "HOME",
	} {
		if got := envDiffers(own, strings.Fields(env)); got != want {
			t.Errorf("%s: %q, want %q", env, got, want)
		}
	}
}

// The client sends what the guard reads of standard input, at most: MaxField is that bound.
func TestMaxFieldIsTheGuardsInputBound(t *testing.T) {
	if hookwire.MaxField != barrier.MaxInputSize+1 {
		t.Fatalf("hookwire.MaxField %d, barrier.MaxInputSize+1 %d", hookwire.MaxField, barrier.MaxInputSize+1)
	}
}
