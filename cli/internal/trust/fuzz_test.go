package trust

import (
	"testing"
)

// FuzzEntry: any line of /etc/passwd or /etc/group is split without a panic, and what it
// accepts has a name and the four fields the group rule reads.
func FuzzEntry(f *testing.F) {
	for _, s := range []string{"ada:x:1000:", "ada:x:1000:ada,bob\r", "#c", "+nis", "::::", "a:b", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		fields, ok := entry(line)
		if ok && (len(fields) < 4 || fields[0] == "") {
			t.Fatalf("entry(%q) = %q", line, fields)
		}
	})
}

// FuzzFolder: any path (REWIND_STATE_DIR is outside input) is judged without a panic.
func FuzzFolder(f *testing.F) {
	for _, s := range []string{"/", "", ".", "..", "/tmp/../tmp/./x", "//a//b/", "/proc/self/fd/0", "a\x00b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		Folder(p)
	})
}
