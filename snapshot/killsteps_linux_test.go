package snapshot

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// killStep is a moment of a checkpoint's commit: the file it creates then, in a folder of the
// store, whose name matches.
type killStep struct {
	what string
	dir  string // relative to the state directory
	name *regexp.Regexp
}

var killSteps = []killStep{
	{"the pack is created", "packs", regexp.MustCompile(`^[0-9a-f]{16}\.pack$`)},
	{"the pack's index is staged (the pack and its trailer written)", "packs", regexp.MustCompile(`^\.tmp-[0-9a-f]{16}\.idx-`)},
	{"the manifest is staged", "objects/tmp", regexp.MustCompile(`^\.tmp-[0-9a-f]{64}-`)},
	{"the checkpoint's file is staged", "objects/tmp", regexp.MustCompile(`^\.tmp-[0-9a-f]{12}-`)},
	{"the position is staged", "", regexp.MustCompile(`^\.tmp-position-`)},
}

// TestKillAtEachStepOfACheckpoint SIGKILLs a real checkpoint process the moment it creates each
// file of its commit (inotify tells the test): the pack, the index's temporary file (the pack
// complete, its index not named yet), the manifest's and the checkpoint's staged files, the
// position's. Each time, whatever the kill interrupted, check fails on nothing (what is left is
// benign: a leftover, or a pack whose index the next writer writes back); the next checkpoint
// leaves nothing at all behind; and at the end every checkpoint taken rewinds byte for byte.
func TestKillAtEachStepOfACheckpoint(t *testing.T) {
	root, s := nestedWorkspace(t, 80)
	first, err := s.Checkpoint(ctx, "first")
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "log")
	r := rand.New(rand.NewPCG(26, 5))
	states := map[string]state{first.ID: readState(t, root)}
	killed := 0
	for round := range 2 {
		for _, step := range killSteps {
			mutate(t, root, r)
			want := readState(t, root)
			if killAt(t, s.StateDir(), step, helperCmd(t, "checkpoint", helperArgs{Root: root, Log: log})) {
				killed++
			}
			s = mustOpen(t, root, Options{})
			rep, err := s.Check(ctx, CheckOptions{ReadData: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, sec := range rep.Sections {
				for _, p := range sec.Problems {
					if !p.Benign {
						t.Fatalf("round %d, killed as %s: check found %s at %s: %s", round, step.what, p.Kind, p.Where, p.What)
					}
				}
			}
			tl, err := s.List()
			if err != nil {
				t.Fatal(err)
			}
			for _, cp := range tl.Checkpoints {
				if _, ok := states[cp.ID]; !ok {
					states[cp.ID] = want // the killed checkpoint, if it committed before the kill
				}
			}
			put(t, root, "after.txt", step.what, 0o644)
			after := readState(t, root)
			res, err := s.Checkpoint(ctx, "after the kill")
			if err != nil {
				t.Fatalf("killed as %s: the next checkpoint: %v", step.what, err)
			}
			states[res.ID] = after
			if found, _ := checkKinds(t, s, CheckOptions{}); len(found) != 0 {
				t.Fatalf("killed as %s: after the next checkpoint, check found %v", step.what, found)
			}
		}
	}
	t.Logf("%d of %d checkpoints killed before they finished", killed, 2*len(killSteps))
	for id, want := range states {
		if _, err := s.Rewind(ctx, id, RestoreOptions{}); err != nil {
			t.Fatalf("rewind to %s: %v", id, err)
		}
		if d := diffStates(want, readState(t, root)); d != "" {
			t.Fatalf("rewind to %s:\n%s", id, d)
		}
	}
}

// killAt runs cmd and SIGKILLs it as soon as it creates a file of step, and reports whether the
// kill came before it exited. It watches the folder with inotify (IN_CREATE), so the kill comes
// within the time the test takes to read one event: before the rename that follows a staged
// file's fsync, nearly always (the test asserts nothing about when).
func killAt(t *testing.T, state string, step killStep, cmd *exec.Cmd) bool {
	t.Helper()
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := syscall.InotifyAddWatch(fd, filepath.Join(state, step.dir), syscall.IN_CREATE); err != nil {
		t.Fatal(err)
	}
	events := os.NewFile(uintptr(fd), "inotify") // non-blocking: read through the poller, so Close ends the read
	defer events.Close()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	seen := make(chan struct{})
	go func() {
		buf := make([]byte, 64<<10)
		for {
			n, err := events.Read(buf)
			if err != nil || n <= 0 {
				return
			}
			for off := 0; off+syscall.SizeofInotifyEvent <= n; {
				ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
				name := buf[off+syscall.SizeofInotifyEvent : off+syscall.SizeofInotifyEvent+int(ev.Len)]
				if step.name.Match(bytes.TrimRight(name, "\x00")) {
					close(seen) // before the kill: the exit that follows is the kill's
					cmd.Process.Signal(syscall.SIGKILL)
					return
				}
				off += syscall.SizeofInotifyEvent + int(ev.Len)
			}
		}
	}()
	select {
	case <-seen:
		err = <-exited
	case err = <-exited:
		select {
		case <-seen: // the kill's exit, come first
		default:
			if err != nil {
				t.Fatalf("the checkpoint failed: %v\n%s", err, stderr.String())
			}
			return false // it finished before the step was seen (the file was not written this time)
		}
	}
	return err != nil && strings.Contains(err.Error(), "killed")
}
