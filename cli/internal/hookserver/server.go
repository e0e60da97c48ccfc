package hookserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agent-rewind/rewind/cli/internal/hook"
	"github.com/agent-rewind/rewind/cli/internal/hookwire"
	"github.com/agent-rewind/rewind/cli/internal/statebase"
	"github.com/agent-rewind/rewind/cli/internal/trust"
	"github.com/agent-rewind/rewind/cli/internal/unixsock"
	"github.com/agent-rewind/rewind/cli/internal/watch"
)

// ErrRunning is returned by Run when another server already runs for the state base.
var ErrRunning = errors.New("a guard server is already running")

// Options configure Run.
type Options struct {
	Socket string        // hookwire.Socket for the server's environment
	Idle   time.Duration // exit after this long with no request (0: never)
	// UID is the only peer uid served; tests set another to see a stranger refused. Zero means
	// the server's own (a root server serves root alone either way).
	UID int
}

// readTimeout bounds the wait for a request once a client has connected.
const readTimeout = 10 * time.Second

// Status is the --json shape of "hook-server status" when a server runs, and the answer to a
// status request.
type Status struct {
	PID     int       `json:"pid"`
	Version string    `json:"version"` // hookwire.Version of its build
	Socket  string    `json:"socket"`
	Started time.Time `json:"started"`
	Served  int64     `json:"served"` // guard calls served since it started
}

type server struct {
	o      Options
	uid    int
	env    map[string]string
	umask  uint32
	base   string // the state base the server's environment names
	status Status
	served atomic.Int64
	last   atomic.Int64 // unix ns of the last request
	stop   func()
	// ctx ends when the server stops; maintaining holds the roots whose store's maintenance
	// runs in the background (one at a time per store), bg waits for them.
	ctx         context.Context
	maintaining sync.Map
	bg          sync.WaitGroup
	commits     groupCommit // the calls log's and the chain's fsyncs after the answers (groupcommit.go)
	warming     sync.Map    // the roots being warmed up (hook.Warm), one at a time each
}

// Run serves guard calls on o.Socket until ctx ends, the idle period passes, the socket file
// is removed or replaced, a client asks it to stop, or a client of another build calls.
// Requests already accepted are answered before it returns.
func Run(ctx context.Context, o Options) error {
	d := filepath.Dir(o.Socket)
	if err := os.MkdirAll(d, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", d, err)
	}
	// A folder another user made first (or one they can change) is refused before anything
	// is put in it; root's chmod below would otherwise make theirs look like ours.
	if err := trust.Folder(d); err != nil {
		return fmt.Errorf("the guard server's folder: %w (or choose a state folder of your own with %s)", err, statebase.Env)
	}
	if err := os.Chmod(d, 0o700); err != nil { // the socket's folder is what keeps others out
		return err
	}
	lock, err := unixsock.Lock(filepath.Join(d, "lock"))
	if errors.Is(err, unixsock.ErrHeld) {
		return ErrRunning
	} else if err != nil {
		return err
	}
	defer lock.Close()
	base, err := statebase.Dir(os.Getenv)
	if err != nil {
		return err
	}
	// The watchers the served calls start run here: the automatic checkpoint then asks its
	// watcher without a connection or a process switch (watch.InProcess).
	watch.InProcess = true
	s := &server{o: o, uid: o.UID, env: ownEnv(), umask: readUmask(), base: base,
		status: Status{PID: os.Getpid(), Version: hookwire.Version(), Socket: o.Socket, Started: time.Now().UTC()}}
	if s.uid == 0 {
		s.uid = os.Getuid()
	}
	s.last.Store(time.Now().UnixNano())
	ln, err := unixsock.Listen(o.Socket)
	if err != nil {
		return err
	}
	mine, err := os.Stat(o.Socket)
	if err != nil {
		ln.Close()
		return err
	}
	defer func() {
		if st, err := os.Stat(o.Socket); err == nil && os.SameFile(st, mine) {
			os.Remove(o.Socket)
		}
	}()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.stop, s.ctx = cancel, ctx
	unixsock.Supervise(ctx, cancel, ln, func() bool {
		st, err := os.Stat(o.Socket)
		if err != nil || !os.SameFile(st, mine) {
			return true // removed or replaced: another server, or nobody, owns it now
		}
		return o.Idle > 0 && time.Since(time.Unix(0, s.last.Load())) > o.Idle
	})
	// Each connection is served by the goroutine that accepted it, the one the poller woke: no
	// hand-off to another goroutine, which another thread may run, between a client's request
	// and its answer. Two goroutines wait to accept, so that a call is never queued behind
	// another's work; more start when calls overlap, and the extra ones end when they do not.
	var (
		wg      sync.WaitGroup
		waiting atomic.Int32
		failed  = make(chan error, 1)
		accept  func()
	)
	accept = func() {
		defer wg.Done()
		for {
			waiting.Add(1)
			c, err := ln.Accept()
			if waiting.Add(-1) == 0 && err == nil {
				wg.Add(1)
				go accept()
			}
			if err != nil {
				if ctx.Err() == nil {
					select {
					case failed <- fmt.Errorf("accept: %w", err):
					default:
					}
					cancel()
				}
				return
			}
			s.serve(c)
			if waiting.Load() >= acceptors {
				return
			}
		}
	}
	wg.Add(acceptors)
	for range acceptors {
		go accept()
	}
	<-ctx.Done()
	wg.Wait()
	s.bg.Wait()
	s.commits.flush()
	select {
	case err := <-failed:
		return err
	default:
		return nil
	}
}

// acceptors is how many goroutines wait to accept a connection when no call overlaps another.
const acceptors = 2

// serve answers one connection. A panic while deciding closes the connection without a
// Result: the client then prints the Accepted answer, which fails closed.
func (s *server) serve(c net.Conn) {
	defer c.Close()
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(os.Stderr, "agent-rewind hook-server: a request panicked: %v\n", r)
		}
	}()
	s.last.Store(time.Now().UnixNano())
	if !s.ownPeer(c) {
		return // not this user's: nothing is read, nothing is said
	}
	c.SetReadDeadline(time.Now().Add(readTimeout))
	p, err := hookwire.ReadMessage(c)
	if err != nil {
		return
	}
	req, err := hookwire.DecodeRequest(p)
	if err != nil {
		return
	}
	c.SetReadDeadline(time.Time{})
	send := func(a *hookwire.Answer) error {
		_, err := c.Write(hookwire.AppendAnswer(nil, a))
		return err
	}
	switch req.Op {
	case hookwire.OpStatus:
		st := s.status
		st.Served = s.served.Load()
		b, _ := json.Marshal(st)
		send(&hookwire.Answer{Kind: hookwire.Result, Stdout: b})
	case hookwire.OpStop:
		send(&hookwire.Answer{Kind: hookwire.Result})
		s.stop()
	case hookwire.OpGuard:
		s.guard(req, send)
		s.last.Store(time.Now().UnixNano())
	case hookwire.OpWarm:
		// Sent by the call that started this server (its prompt was not served): the same
		// checks as a guard call's, for what the warm-up reads of the environment.
		switch {
		case req.Version != s.status.Version, envDiffers(s.env, req.Env) != "", req.Umask != s.umask, !filepath.IsAbs(req.Dir):
			send(&hookwire.Answer{Kind: hookwire.FallBack, Stderr: []byte("not warmed up: another build, environment, umask or no workspace")})
		default:
			send(&hookwire.Answer{Kind: hookwire.Result})
			s.warm(req.Dir)
		}
	default:
		send(&hookwire.Answer{Kind: hookwire.FallBack, Stderr: []byte("unknown op " + req.Op)})
	}
}

// guard runs one guard call, or says why it falls back.
func (s *server) guard(req *hookwire.Request, send func(*hookwire.Answer) error) {
	fallBack := func(why string) {
		send(&hookwire.Answer{Kind: hookwire.FallBack, Stderr: []byte(why)})
	}
	if req.Version != s.status.Version {
		// An upgrade: this server stops, and the client's full guard starts one of its build.
		send(&hookwire.Answer{Kind: hookwire.FallBack, Code: hookwire.Restart,
			Stderr: []byte("the client is " + req.Version + ", this server " + s.status.Version + ": it stops")})
		s.stop()
		return
	}
	if k := envDiffers(s.env, req.Env); k != "" {
		fallBack("the client's " + k + " differs from the server's")
		return
	}
	if req.Umask != s.umask {
		fallBack("the client's umask differs from the server's")
		return
	}
	if !filepath.IsAbs(req.Dir) {
		fallBack("no working directory")
		return
	}
	var out, errb bytes.Buffer
	call, stateDir, ok := hook.ParseArgs(req.Args, req.Dir)
	if !ok {
		code := hook.Refuse(req.Args, &errb)
		send(&hookwire.Answer{Kind: hookwire.Result, Code: code, Stderr: errb.Bytes()})
		return
	}
	if stateDir != "" && stateDir != s.base {
		fallBack("--state-dir names another state folder than the server's")
		return
	}
	if call.Input == "" && !req.StdinRead {
		fallBack("the guard reads standard input, which the client did not send")
		return
	}
	in, err := hook.ReadInput(call, bytes.NewReader(req.Stdin))
	if err != nil { // not a reader's error: the input is in memory
		fallBack("the guard cannot read the input the client sent: " + err.Error())
		return
	}
	code := hook.Interrupted(call, in, errInterrupted, &out, &errb)
	if send(&hookwire.Answer{Kind: hookwire.Accepted, Code: code, Stdout: out.Bytes(), Stderr: errb.Bytes()}) != nil {
		return // the client is gone before anything was done: nothing to answer
	}
	out.Reset()
	errb.Reset()
	s.served.Add(1)
	var maintain, warm string
	call.Maintain = func(root string) { maintain = root }
	call.Warm = func(root string) { warm = root }
	call.SyncLater = s.commits.later
	call.FlushLater = s.commits.laterFunc
	code = hook.GuardInput(call, in, &out, &errb)
	send(&hookwire.Answer{Kind: hookwire.Result, Code: code, Stdout: out.Bytes(), Stderr: errb.Bytes()})
	if maintain != "" {
		s.maintain(maintain)
	}
	if warm != "" {
		s.warm(warm)
	}
}

// warm warms root's workspace up in the background (hook.Warm: its first checkpoint, its
// watcher), after the answer, unless that already runs here.
func (s *server) warm(root string) {
	if _, running := s.warming.LoadOrStore(root, true); running {
		return
	}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		defer s.warming.Delete(root)
		if err := hook.Warm(s.ctx, root); err != nil && s.ctx.Err() == nil {
			fmt.Fprintf(os.Stderr, "agent-rewind hook-server: warming up %s: %v\n", root, err)
		}
	}()
}

// maintain runs the maintenance of root's store in the background, after the answer, unless
// one already runs here (snapshot.Maintain also gives way to one in another process).
func (s *server) maintain(root string) {
	if _, running := s.maintaining.LoadOrStore(root, true); running {
		return
	}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		defer s.maintaining.Delete(root)
		if _, err := hook.Maintain(s.ctx, root); err != nil && s.ctx.Err() == nil {
			fmt.Fprintf(os.Stderr, "agent-rewind hook-server: maintenance of the store of %s: %v\n", root, err)
		}
	}()
}

// errInterrupted is the reason of the answer a client prints when the server stops before it
// answers.
var errInterrupted = errors.New("the guard server (agent-rewind hook-server) stopped before it answered, and it may have recorded the call; see agent-rewind hook-server status, or set REWIND_HOOK_SERVER=off to run the guard in the hook's own process")
