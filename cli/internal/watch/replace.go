package watch

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agent-rewind/rewind/cli/internal/unixsock"
)

// A watcher that does not answer (stopped with SIGSTOP, hung, or dying with its socket still
// open) still holds watch/lock, which keeps a new one from starting: every checkpoint would
// wait for it and walk. So a checkpoint that gets no answer ends it, when it is a watcher
// process of its own ("agent-rewind watch run"; one inside the guard server is left to that
// server), and starts a new one. The watcher writes its pid into the lock file (writePID), and
// /proc tells what that process is.

// writePID records this process as the lock's holder, in the lock file lock holds.
func writePID(lock *os.File) error {
	if err := lock.Truncate(0); err != nil {
		return err
	}
	_, err := lock.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return err
}

// endWaitLimit bounds the wait for an ended watcher to let go of its lock.
const endWaitLimit = 2 * time.Second

// endUnanswering ends the watcher of store (of workspace root) that did not answer, and returns
// once its lock is free; or an error saying why it could not.
func endUnanswering(store, root string) error {
	name := filepath.Join(dir(store), "lock")
	if lockFree(name) {
		return nil // it has exited meanwhile
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b)))
	if err != nil || pid <= 0 {
		return fmt.Errorf("%s is held by a process that did not write its pid there (%.20q): end it, or wait for it", name, b)
	}
	switch holderOf(pid, root) {
	case otherProcess:
		return fmt.Errorf("%s is held by process %d, not a watcher process of its own (the guard server's?): left running", name, pid)
	case watcherOfRoot:
		if err := kill(pid); err != nil {
			return fmt.Errorf("end the watcher (pid %d): %w", pid, err)
		}
	}
	for deadline := time.Now().Add(endWaitLimit); !lockFree(name); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			return fmt.Errorf("the watcher (pid %d) still holds %s %s after it was ended", pid, name, endWaitLimit)
		}
	}
	return nil
}

// kill ends process pid at once; one gone already is no error.
func kill(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return nil // Windows: no such process
	}
	if err := p.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}

// lockFree reports whether no process holds the lock file name (it takes and drops the lock).
func lockFree(name string) bool {
	f, err := unixsock.Lock(name)
	if err != nil {
		return false
	}
	f.Close()
	return true
}

// holder is what the process holding a watcher's lock is.
type holder int

const (
	exiting       holder = iota // gone, a zombie, or ending (its memory released): it lets go of the lock by itself
	watcherOfRoot               // the watcher of the workspace, as spawn starts it
	otherProcess                // anything else: the guard server (whose watchers run inside it), or a pid of another pid namespace
)

// holderOf says what process pid is, for the watcher of root.
func holderOf(pid int, root string) holder {
	proc := "/proc/" + strconv.Itoa(pid)
	st, err := os.ReadFile(proc + "/stat")
	if err != nil {
		return exiting
	}
	// "pid (comm) state ...": comm may hold spaces and parentheses; the state follows the last ')'.
	if i := bytes.LastIndexByte(st, ')'); i < 0 || i+2 >= len(st) || st[i+2] == 'Z' || st[i+2] == 'X' {
		return exiting
	}
	cmdline, err := os.ReadFile(proc + "/cmdline")
	switch {
	case err != nil || len(cmdline) == 0: // a process that is ending has no command line left
		return exiting
	case strings.HasSuffix(string(cmdline), "\x00"+strings.Join(watcherArgs(root), "\x00")+"\x00"):
		return watcherOfRoot
	}
	return otherProcess
}
