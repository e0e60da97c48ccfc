package watch

import (
	"os"
	"strings"
	"testing"
)

// TestParseMountInfo: the fields the watcher reads, escapes undone; a malformed line is an
// error naming it; this system's own table parses.
func TestParseMountInfo(t *testing.T) {
	got, err := parseMountInfo([]byte("36 35 98:0 /mnt1 /mnt/parent rw,noatime master:1 - ext3 /dev/root rw\n" +
		"37 36 0:40 / /work/my\\040ws/sub\\134x rw - tmpfs tmpfs rw\n\n"))
	if err != nil || len(got) != 2 || got[0] != (mountEntry{36, "/mnt/parent"}) || got[1] != (mountEntry{37, `/work/my ws/sub\x`}) {
		t.Fatalf("parse: %+v, %v", got, err)
	}
	for line, want := range map[string]string{
		"36 35 98:0 /mnt1":                 "has 4 fields",
		"x 35 98:0 / /mnt rw - ext4 a rw":  "mount id",
		"36 35 98:0 / mnt rw - ext4 a rw":  "not an absolute path",
		"36 35 98:0 / /m\\04 rw - ext4 a":  "not an absolute path",
		"36 35 98:0 / /m\\999 rw - ext4 a": "not an absolute path",
	} {
		if _, err := parseMountInfo([]byte(line)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error saying %q", line, err, want)
		}
	}
	b, err := os.ReadFile(mountInfo)
	if err != nil {
		t.Skipf("no %s here: %v", mountInfo, err)
	}
	if mounts, err := parseMountInfo(b); err != nil || len(mounts) == 0 {
		t.Fatalf("this system's %s: %d mounts, %v", mountInfo, len(mounts), err)
	}
}

// FuzzParseMountInfo: no input makes the parser panic, and what it accepts is a list of
// absolute mount points.
func FuzzParseMountInfo(f *testing.F) {
	f.Add([]byte("36 35 98:0 /mnt1 /mnt/parent rw,noatime master:1 - ext3 /dev/root rw,errors=continue\n"))
	f.Add([]byte("37 36 0:40 / /a\\040b rw - tmpfs tmpfs rw\n38 36 0:41 / /c\\ rw - x y z\n"))
	f.Add([]byte("1 0 0:1 / / rw - rootfs rootfs rw\n\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		mounts, err := parseMountInfo(b)
		if err != nil {
			return
		}
		for _, m := range mounts {
			if m.ID < 0 || !strings.HasPrefix(m.Point, "/") {
				t.Fatalf("accepted %+v from %q", m, b)
			}
		}
	})
}
