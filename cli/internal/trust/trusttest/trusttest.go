//go:build unix

// Package trusttest gives tests another user to be: the attacks package trust refuses are made
// by a real other uid, not simulated. It needs root (to become that user); without, its
// functions skip the test, saying why.
package trusttest

import (
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// Other returns the uid and gid of another user (nobody), skipping the test when this process
// cannot act as one (it is not root) or the system has no such user.
func Other(t testing.TB) (uid, gid int) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("not root: cannot act as another user (these attacks need a real other uid: run the tests as root)")
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Skipf("no user nobody to act as: %v", err)
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid
}

// Reachable makes dir and every folder above it that lacks it searchable by everyone (o+x), as
// /tmp's test folders are not (0700), so that the other user can reach dir.
func Reachable(t testing.TB, dir string) {
	t.Helper()
	for d := dir; ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm()&0o001 == 0 {
			if err := os.Chmod(d, st.Mode().Perm()|0o055); err != nil {
				t.Fatal(err)
			}
		}
		if d == filepath.Dir(d) {
			return
		}
	}
}

// Command returns a command that runs name as the user uid (group gid).
func Command(uid, gid int, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	return cmd
}

// Self copies the running test binary into dir (which Reachable made reachable) so that the
// other user may run it, and returns the copy's path: a test runs its own helper mode as
// that user.
func Self(t testing.TB, dir string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	to := filepath.Join(dir, filepath.Base(exe))
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return to
}

// Serve is the life of a test binary that Command runs as the other user to be a server:
// it listens on the unix socket sock, hands each connection to handle (which closes it), says
// "ready" on stdout, and serves until the test closes its stdin; it never returns.
func Serve(sock string, handle func(net.Conn)) {
	ln, err := net.Listen("unix", sock)
	if err != nil {
		os.Stdout.WriteString(err.Error() + "\n")
		os.Exit(1)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go handle(c)
		}
	}()
	os.Stdout.WriteString("ready\n")
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}
