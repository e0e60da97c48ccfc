package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestWatchLimitNamedAtStart: a watcher that meets the inotify watch limit at start exits, and
// the checkpoint that started it says so, naming the sysctl that raises the limit (issue 26:
// "exited at start (exit status 1)"). The limit is lowered in a user namespace of the test's
// own (/proc/sys/user/max_inotify_watches), which no other process shares.
func TestWatchLimitNamedAtStart(t *testing.T) {
	needWatcher(t)
	t.Setenv("REWIND_WATCH", "on")
	ws := t.TempDir()
	for _, d := range []string{"a/b/c", "d/e", "f"} {
		mkdirs(t, filepath.Join(ws, d))
	}
	write(t, filepath.Join(ws, "a/file"), "x\n", 0o644)
	cmd := exec.Command("sh", "-c", `echo 4 > /proc/sys/user/max_inotify_watches && exec "$0" "$@"`, bin, "--json", "checkpoint")
	cmd.Dir = ws
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		msg := "cannot make a user namespace to lower the watch limit in (" + err.Error() + ")"
		if os.Getenv("REWIND_CI") == "1" {
			t.Fatal(msg + " (REWIND_CI=1: CI must run this test)")
		}
		t.Skip(msg)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("checkpoint under a watch limit of 4: %v: %s", err, stderr.String())
	}
	var out checkpointOut
	if err := json.Unmarshal([]byte(stdout.String()), &out); err != nil {
		t.Fatalf("checkpoint --json: %v: %s", err, stdout.String())
	}
	if out.Walk.Mode != "full" || !strings.Contains(out.Walk.Reason, "inotify watch limit is reached") || !strings.Contains(out.Walk.Reason, "fs.inotify.max_user_watches") {
		t.Fatalf("under a watch limit of 4: walk = %+v, want a full walk naming the limit and fs.inotify.max_user_watches", out.Walk)
	}
	if st := watchStatusJSON(t, ws); st.Running {
		t.Fatalf("a watcher runs although it met the limit: %+v", st)
	}
	t.Logf("walk: %+v", out.Walk)
}
