//go:build unix

package regular

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// within runs f and fails the test if it has not returned after a few seconds: a hang on a FIFO
// is exactly the failure this package exists to prevent.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: still blocked after 5s", what)
	}
}

// files makes one of each kind of file in a temporary folder and returns their paths by kind.
func files(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	p := map[string]string{
		"regular":       filepath.Join(dir, "regular"),
		"fifo":          filepath.Join(dir, "fifo"),
		"dir":           filepath.Join(dir, "dir"),
		"symlink":       filepath.Join(dir, "symlink"),
		"symlink-fifo":  filepath.Join(dir, "symlink-fifo"),
		"dangling":      filepath.Join(dir, "dangling"),
		"socket":        filepath.Join(dir, "socket"),
		"missing":       filepath.Join(dir, "missing"),
		"char-device":   os.DevNull,
		"under-a-fifo":  filepath.Join(dir, "fifo", "x"),
		"symlink-dir":   filepath.Join(dir, "symlink-dir"),
		"symlink-devnl": filepath.Join(dir, "symlink-devnull"),
	}
	if err := os.WriteFile(p["regular"], []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(p["fifo"], 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(p["dir"], 0o700); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"symlink": p["regular"], "symlink-fifo": p["fifo"], "dangling": p["missing"],
		"symlink-dir": p["dir"], "symlink-devnl": os.DevNull,
	} {
		if err := os.Symlink(target, p[link]); err != nil {
			t.Fatal(err)
		}
	}
	// A socket path must be short (104 bytes on macOS): make it in a short temporary folder.
	sdir, err := os.MkdirTemp("", "reg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sdir) })
	p["socket"] = filepath.Join(sdir, "s")
	l, err := net.Listen("unix", p["socket"])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return p
}

// want is what opening a kind of file must give: the file's content, or an error of this type
// whose message contains this text.
type want struct {
	content string
	found   string // "FIFO" and so on: a *NotRegularError saying "is a FIFO"
	notExit bool   // the usual not-exist error
	other   bool   // some other *fs.PathError (ENOTDIR under a FIFO)
}

func check(t *testing.T, what, path string, got []byte, err error, w want) {
	t.Helper()
	switch {
	case w.found != "":
		var nr *NotRegularError
		if !errors.As(err, &nr) || !errors.Is(err, ErrNotRegular) {
			t.Fatalf("%s(%s): got %v (%T), want a *NotRegularError", what, path, err, err)
		}
		msg := err.Error()
		if !strings.Contains(msg, path) || !strings.Contains(msg, "is "+w.found) || !strings.Contains(msg, "not a regular file") {
			t.Fatalf("%s(%s): message %q does not name the path and say it is %s, not a regular file", what, path, msg, w.found)
		}
		// What to do differs: a state file is moved aside, an input saved to a regular file.
		advice := "move it aside"
		if strings.Contains(what, "Input") {
			advice = "give a regular file"
		}
		if !strings.Contains(msg, advice) || nr.Input != strings.Contains(what, "Input") {
			t.Fatalf("%s(%s): message %q (Input %v) does not say %q", what, path, msg, nr.Input, advice)
		}
	case w.notExit:
		if !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s(%s): got %v, want fs.ErrNotExist", what, path, err)
		}
	case w.other:
		var pe *fs.PathError
		if err == nil || !errors.As(err, &pe) || errors.Is(err, ErrNotRegular) {
			t.Fatalf("%s(%s): got %v, want a *fs.PathError", what, path, err)
		}
	default:
		if err != nil || string(got) != w.content {
			t.Fatalf("%s(%s): got %q, %v; want %q", what, path, got, err, w.content)
		}
	}
}

func TestReadFileAndReadInput(t *testing.T) {
	p := files(t)
	cases := []struct {
		kind         string
		state, input want
	}{
		{"regular", want{content: "hello\n"}, want{content: "hello\n"}},
		{"fifo", want{found: "a FIFO"}, want{found: "a FIFO"}},
		{"dir", want{found: "a directory"}, want{found: "a directory"}},
		{"socket", want{found: "a socket"}, want{found: "a socket"}},
		{"char-device", want{found: "a character device"}, want{found: "a character device"}},
		{"missing", want{notExit: true}, want{notExit: true}},
		{"under-a-fifo", want{other: true}, want{other: true}},
		// State files never follow a symlink; a person's input does, to a regular file only.
		{"symlink", want{found: "a symlink"}, want{content: "hello\n"}},
		{"symlink-fifo", want{found: "a symlink"}, want{found: "a FIFO"}},
		{"symlink-dir", want{found: "a symlink"}, want{found: "a directory"}},
		{"symlink-devnl", want{found: "a symlink"}, want{found: "a character device"}},
		{"dangling", want{found: "a symlink"}, want{notExit: true}},
	}
	for _, c := range cases {
		t.Run(c.kind, func(t *testing.T) {
			path := p[c.kind]
			within(t, "ReadFile", func() {
				b, err := ReadFile(path)
				check(t, "ReadFile", path, b, err, c.state)
			})
			within(t, "ReadInput", func() {
				b, err := ReadInput(path)
				check(t, "ReadInput", path, b, err, c.input)
			})
		})
	}
}

// OpenFile with write flags: a FIFO or socket fails at once (the open itself may fail with
// ENXIO, or succeed on a FIFO with O_RDWR), O_CREATE makes a regular file, and nothing that is
// not a regular file is ever written to or truncated.
func TestOpenFileFlags(t *testing.T) {
	p := files(t)
	flags := map[string]int{
		"O_RDWR|O_CREATE":          os.O_RDWR | os.O_CREATE,
		"O_WRONLY|O_APPEND":        os.O_WRONLY | os.O_APPEND,
		"O_RDWR|O_APPEND|O_CREATE": os.O_RDWR | os.O_APPEND | os.O_CREATE,
		"O_WRONLY|O_TRUNC":         os.O_WRONLY | os.O_TRUNC,
	}
	for name, flag := range flags {
		for kind, found := range map[string]string{
			"fifo": "a FIFO", "socket": "a socket", "dir": "a directory", "symlink": "a symlink",
			"symlink-fifo": "a symlink", "char-device": "a character device",
		} {
			path := p[kind]
			within(t, name+" "+kind, func() {
				f, err := OpenFile(path, flag, 0o600)
				if f != nil {
					f.Close()
				}
				check(t, "OpenFile "+name, path, nil, err, want{found: found})
			})
		}
	}
	if b, err := os.ReadFile(p["regular"]); err != nil || string(b) != "hello\n" {
		t.Fatalf("the symlink's target changed: %q %v", b, err)
	}

	created := filepath.Join(filepath.Dir(p["regular"]), "created")
	f, err := OpenFile(created, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o640)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("line\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(created); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o640&^umask() {
		t.Fatalf("created: %v %v", fi.Mode(), err)
	}
}

func umask() fs.FileMode {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return fs.FileMode(m)
}

// The descriptor comes back blocking, as os.Open's: O_NONBLOCK was only for the open.
func TestOpenClearsNonblock(t *testing.T) {
	p := files(t)
	f, err := Open(p["regular"])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	raw, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var flags int
	var ferr error
	if err := raw.Control(func(fd uintptr) {
		r, _, e := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
		flags = int(r)
		if e != 0 {
			ferr = e
		}
	}); err != nil || ferr != nil {
		t.Fatal(err, ferr)
	}
	if flags&syscall.O_NONBLOCK != 0 {
		t.Fatalf("O_NONBLOCK still set: flags %#x", flags)
	}
	b := make([]byte, 16)
	n, err := f.Read(b)
	if err != nil || string(b[:n]) != "hello\n" {
		t.Fatalf("read %q %v", b[:n], err)
	}
}
