//go:build unix

package trust

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Folder reports whether dir may be trusted with agent-rewind's state: nil when dir and every
// folder above it can be changed by no one but this user and root (see the package doc), an
// *Error naming the first one that can otherwise. A dir that does not exist yet is judged by
// the folders above it that do.
func Folder(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	real, whole, err := walk(abs)
	if err != nil || !whole {
		return err
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(real, &st); err != nil {
		return &os.PathError{Op: "lstat", Path: real, Err: err}
	}
	return own(real, &st)
}

// Within checks the folders from below base (a folder Folder trusts) down to dir, each as
// Folder checks its last one: owned by this user, writable by no one else. Components that do
// not exist yet pass. It costs one lstat a component, for a folder found inside a trusted one.
func Within(base, dir string) error {
	parts, err := below(base, dir)
	if err != nil || len(parts) == 0 {
		return err
	}
	cur := base
	for _, c := range parts {
		cur = filepath.Join(cur, c)
		var st syscall.Stat_t
		if err := syscall.Lstat(cur, &st); err == syscall.ENOENT {
			return nil
		} else if err != nil {
			return &os.PathError{Op: "lstat", Path: cur, Err: err}
		}
		if st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
			return &Error{Path: cur, What: "it is not a folder (" + kind(&st) + ")",
				Fix: "remove it, or move it aside: agent-rewind makes a folder there"}
		}
		if err := own(cur, &st); err != nil {
			return err
		}
	}
	return nil
}

// walk resolves abs from / down, checking each folder it passes through as a parent (above)
// and each symlink's owner, and returns the real path of abs; whole is false when a component
// does not exist (the rest is not checked: it is to be created).
func walk(abs string) (real string, whole bool, err error) {
	var st syscall.Stat_t
	if err := syscall.Lstat("/", &st); err != nil {
		return "", false, &os.PathError{Op: "lstat", Path: "/", Err: err}
	}
	if err := above("/", &st); err != nil {
		return "", false, err
	}
	cur, rest, links := "/", split(abs), 0
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		if c == ".." {
			cur = filepath.Dir(cur) // cur is real: its parent is the physical one
			continue
		}
		next := filepath.Join(cur, c)
		if err := syscall.Lstat(next, &st); err == syscall.ENOENT {
			return next, false, nil
		} else if err != nil {
			return "", false, &os.PathError{Op: "lstat", Path: next, Err: err}
		}
		switch st.Mode & syscall.S_IFMT {
		case syscall.S_IFLNK:
			if uid := int(st.Uid); uid != os.Getuid() && uid != 0 {
				return "", false, &Error{Path: next, What: "it is a symlink owned by uid " + strconv.Itoa(uid) + ", who can point it at a folder of theirs",
					Fix: "replace it with a folder or a symlink of your own"}
			}
			if links++; links > maxLinks {
				return "", false, &os.PathError{Op: "resolve", Path: abs, Err: syscall.ELOOP}
			}
			target, err := os.Readlink(next)
			if err != nil {
				return "", false, err
			}
			if filepath.IsAbs(target) {
				cur = "/"
			}
			rest = append(split(target), rest...)
		case syscall.S_IFDIR:
			if len(rest) > 0 { // the last folder is checked as trusted itself (own), not as above
				if err := above(next, &st); err != nil {
					return "", false, err
				}
			}
			cur = next
		default:
			return "", false, &Error{Path: next, What: "it is not a folder (" + kind(&st) + ")",
				Fix: "remove it or move it aside, or choose another folder"}
		}
	}
	return cur, true, nil
}

// split returns p's components, without empty ones and ".".
func split(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

// above checks a folder that holds the one trusted (or another folder above it): owned by this
// user or root, and writable by no one else unless sticky (no one else can then rename or remove
// what is in it) or by a group of the owner alone.
func above(path string, st *syscall.Stat_t) error {
	uid := int(st.Uid)
	if uid != os.Getuid() && uid != 0 {
		return &Error{Path: path, What: "it is owned by uid " + strconv.Itoa(uid) + " (you are uid " + strconv.Itoa(os.Getuid()) + "), who can rename or replace what is in it",
			Fix: "choose a folder outside " + path}
	}
	mode := uint32(st.Mode)
	if mode&0o022 == 0 || mode&syscall.S_ISVTX != 0 || (mode&0o002 == 0 && ownerOnlyGroup(st.Gid, st.Uid)) {
		return nil
	}
	return &Error{Path: path, What: "it is " + writableBy(mode) + " (mode " + octal(mode) + ") and not sticky, so others can rename or replace what is in it",
		Fix: "run chmod go-w " + path + ", or choose a folder outside it"}
}

// own checks the folder trusted itself: owned by this user, writable by no one else.
func own(path string, st *syscall.Stat_t) error {
	if uid := int(st.Uid); uid != os.Getuid() {
		return &Error{Path: path, What: "it is owned by uid " + strconv.Itoa(uid) + ", not by you (uid " + strconv.Itoa(os.Getuid()) + "): another user may have made it first, to read and change what agent-rewind keeps there",
			Fix: "use a folder of your own, or, if this one is yours, chown it to uid " + strconv.Itoa(os.Getuid())}
	}
	mode := uint32(st.Mode)
	if mode&0o022 == 0 || (mode&0o002 == 0 && ownerOnlyGroup(st.Gid, st.Uid)) {
		return nil
	}
	return &Error{Path: path, What: "it is " + writableBy(mode) + " (mode " + octal(mode) + ")",
		Fix: "run chmod 700 " + path}
}

func writableBy(mode uint32) string {
	switch {
	case mode&0o022 == 0o022:
		return "writable by its group and by everyone"
	case mode&0o002 != 0:
		return "writable by everyone"
	}
	return "writable by its group"
}

func octal(mode uint32) string { return "0" + strconv.FormatUint(uint64(mode&0o7777), 8) }

func kind(st *syscall.Stat_t) string {
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		return "a file"
	case syscall.S_IFSOCK:
		return "a socket"
	case syscall.S_IFIFO:
		return "a FIFO"
	case syscall.S_IFCHR, syscall.S_IFBLK:
		return "a device"
	}
	return "not a folder"
}
