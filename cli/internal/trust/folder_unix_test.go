//go:build unix

package trust

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/agent-rewind/rewind/cli/internal/trust/trusttest"
)

// mkdir makes a folder of mode perm (chmod(2): the umask does not apply, and 01000 is the
// sticky bit, which os.Chmod spells otherwise).
func mkdir(t *testing.T, dir string, perm uint32) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	chmod(t, dir, perm)
	return dir
}

func chmod(t *testing.T, p string, perm uint32) {
	t.Helper()
	if err := syscall.Chmod(p, perm); err != nil {
		t.Fatal(err)
	}
}

func TestFolderOfOwnUser(t *testing.T) {
	base := t.TempDir()
	state := mkdir(t, filepath.Join(base, "state"), 0o700)
	for _, d := range []string{state, filepath.Join(state, "not", "made", "yet"), state + "/./x/..", mkdir(t, filepath.Join(base, "open"), 0o755)} {
		if err := Folder(d); err != nil {
			t.Fatalf("Folder(%s): %v", d, err)
		}
	}
	// A sticky, world-writable folder above (as /tmp) is fine; one that is not sticky is not.
	sticky := mkdir(t, filepath.Join(base, "sticky"), 0o1777)
	mine := mkdir(t, filepath.Join(sticky, "mine"), 0o700)
	if err := Folder(mine); err != nil {
		t.Fatalf("a folder in a sticky one: %v", err)
	}
	chmod(t, sticky, 0o777)
	mustRefuse(t, Folder(mine), sticky, "writable by its group and by everyone", "not sticky", "chmod go-w "+sticky)
	mustRefuse(t, Folder(filepath.Join(sticky, "new")), sticky, "not sticky") // not made yet: judged by what is above
}

func TestFolderWritableByOthers(t *testing.T) {
	state := mkdir(t, filepath.Join(t.TempDir(), "state"), 0o777)
	mustRefuse(t, Folder(state), state, "writable by its group and by everyone", "mode 0777", "chmod 700 "+state)
	chmod(t, state, 0o703)
	mustRefuse(t, Folder(state), state, "writable by everyone")
	chmod(t, state, 0o1777) // sticky does not help the folder itself: others could add to it
	mustRefuse(t, Folder(state), state, "by everyone", "mode 01777")
}

// A group-writable folder passes only when its group is the owner's alone (Debian's ssh rule).
func TestFolderGroupWritable(t *testing.T) {
	state := mkdir(t, filepath.Join(t.TempDir(), "state"), 0o770)
	st := mustStat(t, state)
	dir := t.TempDir()
	defer func(p, g string) { passwdFile, groupFile = p, g }(passwdFile, groupFile)
	passwdFile, groupFile = filepath.Join(dir, "passwd"), filepath.Join(dir, "group")
	uid, gid := strconv.Itoa(int(st.uid)), strconv.Itoa(int(st.gid))
	os.WriteFile(passwdFile, []byte("# users\nada:x:"+uid+":"+gid+":Ada:/home/ada:/bin/sh\n"), 0o600)
	for _, c := range []struct {
		group string
		ok    bool
	}{
		{"ada:x:" + gid + ":\n", true},             // the user's private group
		{"ada:x:" + gid + ":ada\n", true},          // with the user as its only member
		{"staff:x:" + gid + ":\n", false},          // another name: others may be in it
		{"ada:x:" + gid + ":ada,bob\n", false},     // another member
		{"other:x:1:\nada:x:" + gid + ":\n", true}, // found past other lines
		{"+ada:x:" + gid + ":\n", false},           // a NIS line is not read
		{"ada:x:" + gid + "\n", false},             // too few fields
		{"#ada:x:" + gid + ":\r\n", false},         // a comment
		{"ada:x:" + gid + ": ada \r\n", true},      // spaces and CRLF
	} {
		os.WriteFile(groupFile, []byte(c.group), 0o600)
		err := Folder(state)
		if c.ok && err != nil || !c.ok && err == nil {
			t.Errorf("group file %q: Folder = %v, want ok %v", c.group, err, c.ok)
		}
	}
	chmod(t, state, 0o772) // writable by everyone too: no group rule saves it
	os.WriteFile(groupFile, []byte("ada:x:"+gid+":\n"), 0o600)
	mustRefuse(t, Folder(state), state, "writable by its group and by everyone")
}

type stat struct{ uid, gid uint32 }

func mustStat(t *testing.T, p string) stat {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(p, &st); err != nil {
		t.Fatal(err)
	}
	return stat{st.Uid, st.Gid}
}

// Folders and symlinks another user owns: a real other uid (nobody), as root.
func TestFolderOfAnotherUser(t *testing.T) {
	uid, gid := trusttest.Other(t)
	base := t.TempDir()
	// The folder itself made first by the other user, even with a mode that keeps others out.
	theirs := mkdir(t, filepath.Join(base, "theirs"), 0o700)
	os.Chown(theirs, uid, gid)
	mustRefuse(t, Folder(theirs), theirs, "owned by uid "+strconv.Itoa(uid), "not by you", "chown")
	// A folder of ours inside theirs: they can rename ours and put another in its place.
	inside := mkdir(t, filepath.Join(theirs, "state"), 0o700)
	mustRefuse(t, Folder(inside), theirs, "owned by uid "+strconv.Itoa(uid), "choose a folder outside "+theirs)
	mustRefuse(t, Folder(filepath.Join(theirs, "new")), theirs, "owned by uid")
	// Our folder reached through their symlink, which they can point elsewhere.
	mine := mkdir(t, filepath.Join(base, "mine"), 0o700)
	link := filepath.Join(base, "link")
	if err := os.Symlink(mine, link); err != nil {
		t.Fatal(err)
	}
	if err := Folder(link); err != nil {
		t.Fatalf("our folder through our own symlink: %v", err)
	}
	if err := os.Lchown(link, uid, gid); err != nil {
		t.Fatal(err)
	}
	mustRefuse(t, Folder(link), link, "symlink owned by uid "+strconv.Itoa(uid))
	mustRefuse(t, Folder(filepath.Join(link, "sub")), link, "symlink owned by uid")
	// Within checks what is below a trusted folder.
	if err := Within(base, filepath.Join(mine, "a", "b")); err != nil {
		t.Fatalf("Within: %v", err)
	}
	mustRefuse(t, Within(base, filepath.Join(theirs, "x")), theirs, "owned by uid")
}

func TestFolderOddPaths(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "file")
	os.WriteFile(file, nil, 0o600)
	mustRefuse(t, Folder(file), file, "not a folder (a file)")
	mustRefuse(t, Folder(filepath.Join(file, "x")), file, "not a folder")
	loop := filepath.Join(base, "loop")
	os.Symlink(loop, loop)
	if err := Folder(loop); err == nil || !strings.Contains(err.Error(), "too many levels of symbolic links") {
		t.Fatalf("a symlink loop: %v", err)
	}
	// A relative symlink with .. resolves physically.
	mkdir(t, filepath.Join(base, "a", "b"), 0o700)
	os.Symlink("a/b/..", filepath.Join(base, "rel"))
	if err := Folder(filepath.Join(base, "rel")); err != nil {
		t.Fatalf("a relative symlink: %v", err)
	}
	os.Chmod(filepath.Join(base, "a"), 0o777)
	mustRefuse(t, Folder(filepath.Join(base, "rel")), filepath.Join(base, "a"), "mode 0777")
	if err := Within(base, filepath.Dir(base)); err == nil {
		t.Fatal("Within accepted a folder outside its base")
	}
}

// BenchmarkFolder is what the hook client adds to every call: the state folder and the guard
// server's folder below it judged, one lstat a component (a folder as deep as a home's
// ~/.local/state/agent-rewind/hook-server). Compare with BenchmarkLstat, one lstat alone.
func BenchmarkFolder(b *testing.B) {
	base := filepath.Join(b.TempDir(), "home", "ada", ".local", "state", "agent-rewind")
	os.MkdirAll(filepath.Join(base, "hook-server"), 0o700)
	for b.Loop() {
		if err := Folder(base); err != nil {
			b.Fatal(err)
		}
		if err := Within(base, filepath.Join(base, "hook-server")); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLstat(b *testing.B) {
	dir := b.TempDir()
	var st syscall.Stat_t
	for b.Loop() {
		syscall.Lstat(dir, &st)
	}
}
