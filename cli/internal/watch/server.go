//go:build linux || windows

package watch

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agent-rewind/rewind/cli/internal/unixsock"
)

// catchUp bounds the wait for the cookie event: a watcher that is this far behind refuses, well
// within the asker's askTimeout.
const catchUp = time.Second

// maxRequest bounds a request line: a request is a few dozen bytes.
const maxRequest = 64 << 10

// server is a running watcher.
type server struct {
	o       Options
	id      string
	started time.Time
	t       *tree
	cookies atomic.Int64
	last    atomic.Int64 // unix ns of the last request
	stop    func()
}

// Run watches o.Root and answers on the store's socket until ctx ends, the idle period passes,
// the workspace's folder goes, or a client asks it to stop.
func Run(ctx context.Context, o Options) error {
	d := dir(o.Store)
	if err := os.MkdirAll(filepath.Join(d, "cookies"), 0o700); err != nil {
		return fmt.Errorf("create %s: %w", d, err)
	}
	lock, err := unixsock.Lock(filepath.Join(d, "lock"))
	if errors.Is(err, unixsock.ErrHeld) {
		return ErrRunning
	} else if err != nil {
		return err
	}
	defer lock.Close()
	if err := writePID(lock); err != nil {
		return fmt.Errorf("write %s: %w", lock.Name(), err)
	}
	var idb [8]byte
	rand.Read(idb[:])
	s := &server{o: o, id: hex.EncodeToString(idb[:]), started: time.Now().UTC()}
	s.last.Store(time.Now().UnixNano())
	if s.t, err = newTree(o.Root, o.Store, filepath.Join(d, "cookies")); err != nil {
		return err
	}
	defer s.t.close()
	go s.t.read()
	ln, err := unixsock.Listen(sockPath(o.Store))
	if err != nil {
		return err
	}
	mine, err := os.Stat(sockPath(o.Store))
	if err != nil {
		ln.Close()
		return err
	}
	defer func() {
		if st, err := os.Stat(sockPath(o.Store)); err == nil && os.SameFile(st, mine) {
			os.Remove(sockPath(o.Store))
		}
	}()
	defer ln.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.stop = cancel
	local.Store(o.Store, s)
	defer local.CompareAndDelete(o.Store, s)
	unixsock.Supervise(ctx, cancel, ln, func() bool {
		s.t.mu.Lock()
		gone := s.t.gone
		s.t.mu.Unlock()
		if st, err := os.Stat(sockPath(o.Store)); err != nil || !os.SameFile(st, mine) {
			gone = true // removed or replaced: no client reaches this watcher, whose lock keeps others out
		}
		return gone || s.t.rootMoved() != "" || (o.Idle > 0 && time.Since(time.Unix(0, s.last.Load())) > o.Idle)
	})
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("accept: %w", err)
		}
		go s.serve(c)
	}
}

func (s *server) serve(c net.Conn) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(catchUp + 5*time.Second))
	line, err := bufio.NewReader(io.LimitReader(c, maxRequest)).ReadBytes('\n')
	var req Request
	if err == nil {
		err = json.Unmarshal(line, &req)
	}
	var r Reply
	if err != nil {
		r = s.reply()
		r.Error = fmt.Sprintf("unreadable request: %v", err)
	} else {
		r = s.answer(req, false)
	}
	json.NewEncoder(c).Encode(&r)
}

// reply is a Reply that says who answers.
func (s *server) reply() Reply {
	return Reply{ID: s.id, PID: os.Getpid(), Root: s.o.Root, Started: s.started, Watched: s.t.watched(), MountNS: ownMountNS()}
}

// answer answers one request, from the socket or, with local, from this process (Ask, for a
// watcher running in the asking process).
func (s *server) answer(req Request, local bool) Reply {
	s.last.Store(time.Now().UnixNano())
	r := s.reply()
	switch {
	case req.Op == "status":
	case req.Op == "stop":
		defer s.stop()
	case req.Op == "since":
		// The asker's changes are queued before its question: the cookie's event comes after
		// them. An asker in this process may be answered by draining the queue instead, where
		// the tree can (catchUp).
		if err := s.t.catchUp(local, s.sync); err != nil {
			r.Refused = err.Error()
			break
		}
		s.t.since(s.id, req.Token, &r)
		if r.Refused != "" && r.Token == "" {
			defer s.stop() // the watch cannot be trusted any more: the next checkpoint starts a fresh one
		}
	default:
		r.Error = fmt.Sprintf("unknown op %q (want since, status or stop)", req.Op)
	}
	return r
}

// askLocal answers req when this process runs the store's watcher (ok false otherwise).
func askLocal(store string, req Request) (r Reply, ok bool) {
	v, ok := local.Load(store)
	if !ok {
		return r, false
	}
	return v.(*server).answer(req, true), true
}

// local holds the watchers running in this process, by store: the guard server's (InProcess).
var local sync.Map

// sync returns once every event that happened before it was called has been read: it creates a
// cookie file in a watched folder and waits for its event, which the kernel queues after them.
func (s *server) sync() error {
	name := strconv.FormatInt(s.cookies.Add(1), 10)
	ch := make(chan struct{})
	s.t.mu.Lock()
	s.t.waiters[name] = ch
	s.t.mu.Unlock()
	p := filepath.Join(s.t.cookie, name)
	f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("create cookie: %v", err)
	}
	f.Close()
	defer os.Remove(p)
	select {
	case <-ch:
		return nil
	case <-time.After(catchUp):
		s.t.mu.Lock()
		delete(s.t.waiters, name)
		s.t.mu.Unlock()
		return fmt.Errorf("the watcher did not catch up within %s", catchUp)
	}
}
