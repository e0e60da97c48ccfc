package watch

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// mountNSEnv marks the test process that inMountNamespace started.
const mountNSEnv = "REWIND_TEST_IN_MOUNT_NS"

// inMountNamespace reports whether the calling test runs in a mount namespace of its own, where
// its mounts are seen by no other process. Called first outside one, it runs the test again in
// a child process in a new mount namespace (and a new user namespace when not root), reports
// what it printed, and returns false: the caller then returns.
func inMountNamespace(t *testing.T) bool {
	t.Helper()
	if os.Getenv(mountNSEnv) == "1" {
		// Mounts made here must not propagate to the namespace this one was copied from.
		must(t, syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""))
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), mountNSEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS}
	if uid, gid := os.Getuid(), os.Getgid(); uid != 0 {
		cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: uid, Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: gid, Size: 1}}
	}
	out, err := cmd.CombinedOutput()
	var xe *exec.ExitError
	if err != nil && !errors.As(err, &xe) {
		msg := "cannot make a mount namespace for the test (" + err.Error() + "): root, or unprivileged user namespaces, are needed"
		if os.Getenv("REWIND_CI") == "1" {
			t.Fatal(msg + " (REWIND_CI=1: CI must run the mount tests)")
		}
		t.Skip(msg)
	}
	t.Logf("in a mount namespace of its own:\n%s", out)
	if err != nil {
		t.Fatalf("the test failed in its mount namespace: %v", err)
	}
	return false
}

// mount mounts source on target for the rest of the test.
func mount(t *testing.T, source, target, fstype string, flags uintptr, data string) {
	t.Helper()
	must(t, syscall.Mount(source, target, fstype, flags, data))
	t.Cleanup(func() { syscall.Unmount(target, syscall.MNT_DETACH) })
}

// TestMountsBelowTheRoot: mounts inside the workspace, which inotify on the folders above them
// does not see through (issue 26): one folder mounted at two paths, a file system mounted on a
// subfolder, a file bind-mounted on a file, a mount made and one removed while the watcher runs. Every assisted checkpoint
// equals a full walk; the mount points are read whole at every checkpoint and named in the walk.
func TestMountsBelowTheRoot(t *testing.T) {
	if !inMountNamespace(t) {
		return
	}
	root, store, other := t.TempDir(), filepath.Join(t.TempDir(), "store"), t.TempDir()
	at := func(p string) string { return filepath.Join(root, p) }
	writeFile(t, at("a/f"), "f\n")
	writeFile(t, at("sub/s"), "s\n")
	writeFile(t, filepath.Join(other, "o"), "o\n")
	must(t, os.MkdirAll(at("b"), 0o755))
	must(t, os.MkdirAll(at("t"), 0o755))
	mount(t, at("a"), at("b"), "", syscall.MS_BIND, "")
	mount(t, "tmpfs", at("t"), "tmpfs", 0, "size=1m")
	writeFile(t, at("t/x"), "x\n")
	writeFile(t, at("file"), "the file\n")
	mount(t, filepath.Join(other, "o"), at("file"), "", syscall.MS_BIND, "")

	c := newCompared(t, root, store)
	w1 := startWatcher(t, root, store)
	c.check("the first checkpoint")
	c.check("nothing changed")
	writeFile(t, at("a/f2"), "f2\n")
	w, why := c.check("a/f2 written (b shows it too)")
	if w.Mode != "changed" || !slices.Equal(w.Mounts, []string{"b", "file", "t"}) {
		t.Fatalf("with b, file and t mounted: walk %+v (%s), want the hint, with mounts [b file t]", w, why)
	}
	writeFile(t, at("b/f3"), "f3\n")
	c.check("b/f3 written (a shows it too)")
	writeFile(t, at("t/y"), "y\n")
	c.check("t/y written")
	writeFile(t, filepath.Join(other, "o"), "o changed\n")
	c.check("other/o written (file shows it)")

	// A mount made while the watcher runs: no event says so.
	mount(t, other, at("sub"), "", syscall.MS_BIND, "")
	w, why = c.check("other mounted on sub")
	reasonHas(t, "other mounted on sub", w, why, "mounts")
	w1.stopped(t)
	startWatcher(t, root, store)
	c.check("a new watcher, first checkpoint")
	writeFile(t, filepath.Join(other, "o2"), "o2\n")
	if w, why := c.check("o2 written in other"); w.Mode != "changed" || !slices.Equal(w.Mounts, []string{"b", "file", "sub", "t"}) {
		t.Fatalf("with b, file, sub and t mounted: walk %+v (%s), want the hint, with mounts [b file sub t]", w, why)
	}
	// A mount removed while the watcher runs: what it hid shows again.
	must(t, syscall.Unmount(at("t"), 0))
	w, why = c.check("t unmounted")
	reasonHas(t, "t unmounted", w, why, "mounts")
}
