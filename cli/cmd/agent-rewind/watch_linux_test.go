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

// TestWatchLimitNamedAtStart: a watcher that meets an inotify limit at start exits, and the
// checkpoint that started it says so, naming the sysctl that raises the limit (issue 26:
// "exited at start (exit status 1)"). Each limit is lowered in a user namespace of the test's
// own (/proc/sys/user/max_inotify_*), which no other process shares.
func TestWatchLimitNamedAtStart(t *testing.T) {
	needWatcher(t)
	t.Setenv("REWIND_WATCH", "on")
	for _, c := range []struct{ limit, value, want string }{
		{"max_inotify_watches", "4", "inotify watch limit is reached (raise fs.inotify.max_user_watches"},
		{"max_inotify_instances", "0", "inotify instance limit is reached (raise fs.inotify.max_user_instances"},
	} {
		t.Run(c.limit, func(t *testing.T) {
			ws := t.TempDir()
			for _, d := range []string{"a/b/c", "d/e", "f"} {
				mkdirs(t, filepath.Join(ws, d))
			}
			write(t, filepath.Join(ws, "a/file"), "x\n", 0o644)
			cmd := exec.Command("sh", "-c", `echo `+c.value+` > /proc/sys/user/`+c.limit+` && exec "$0" "$@"`, bin, "--json", "checkpoint")
			cmd.Dir = ws
			cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER,
				UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
				GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}}
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				msg := "cannot make a user namespace to lower the limit in (" + err.Error() + ")"
				if os.Getenv("REWIND_CI") == "1" {
					t.Fatal(msg + " (REWIND_CI=1: CI must run this test)")
				}
				t.Skip(msg)
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("checkpoint with %s %s: %v: %s", c.limit, c.value, err, stderr.String())
			}
			var out checkpointOut
			if err := json.Unmarshal([]byte(stdout.String()), &out); err != nil {
				t.Fatalf("checkpoint --json: %v: %s", err, stdout.String())
			}
			if out.Walk.Mode != "full" || !strings.Contains(out.Walk.Reason, c.want) {
				t.Fatalf("with %s %s: walk = %+v, want a full walk saying %q", c.limit, c.value, out.Walk, c.want)
			}
			if st := watchStatusJSON(t, ws); st.Running {
				t.Fatalf("a watcher runs although it met the limit: %+v", st)
			}
			t.Logf("walk: %+v", out.Walk)
		})
	}
}
