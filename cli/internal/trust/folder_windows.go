package trust

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Windows has no modes: each folder and link is judged by its security descriptor
// (GetSecurityInfo), its owner and its access list. The folder trusted must be owned by this
// user (or by whom the user's new folders are owned by: Administrators, for an elevated
// administrator), every folder above it and every link on the way by this user or one of
// Windows' own accounts (SYSTEM, Administrators, TrustedInstaller). No one else may change the
// folder trusted or a link (changeRights), counting the entries only its new files and folders
// inherit, nor rename or remove what is in a folder above (replaceRights: adding to it is
// allowed, as to a sticky /tmp). A user's %LOCALAPPDATA% lets in no one but the user, SYSTEM and
// Administrators; a folder made in C:\ inherits Authenticated Users' right to change it.

// Folder reports whether dir may be trusted with agent-rewind's state (see the package doc
// and above): nil when dir is this user's and every folder and link above it this user's or
// Windows', an *Error naming the first that is not. A dir that does not exist yet is judged
// by the folders above it that do.
func Folder(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	y, err := self()
	if err != nil {
		return &os.PathError{Op: "read this process's user for", Path: dir, Err: err}
	}
	real, whole, err := walk(abs, y)
	if err != nil || !whole {
		return err
	}
	return own(real, y)
}

// Within checks the folders from below base (a folder Folder trusts) down to dir, each as
// Folder checks its last one: a folder, owned by this user. Components that do not exist yet
// pass.
func Within(base, dir string) error {
	parts, err := below(base, dir)
	if err != nil || len(parts) == 0 {
		return err
	}
	y, err := self()
	if err != nil {
		return &os.PathError{Op: "read this process's user for", Path: dir, Err: err}
	}
	cur := base
	for _, c := range parts {
		cur = filepath.Join(cur, c)
		fi, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		} else if err != nil {
			return err
		}
		if !fi.IsDir() || fi.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0 {
			return &Error{Path: cur, What: "it is not a folder (" + kind(fi.Mode()) + ")",
				Fix: "remove it, or move it aside: agent-rewind makes a folder there"}
		}
		if err := own(cur, y); err != nil {
			return err
		}
	}
	return nil
}

// walk resolves abs from its volume's root down, checking each folder it passes through as a
// parent (above) and each link's owner, and returns the real path of abs; whole is false when
// a component does not exist (the rest is not checked: it is to be created).
func walk(abs string, y you) (real string, whole bool, err error) {
	root := filepath.VolumeName(abs) + `\`
	if err := above(root, y); err != nil {
		return "", false, err
	}
	cur, rest, links := root, split(abs[len(root)-1:]), 0
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		if c == ".." {
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			return next, false, nil
		} else if err != nil {
			return "", false, err
		}
		switch m := fi.Mode(); {
		case m&(fs.ModeSymlink|fs.ModeIrregular) != 0: // a symlink, or a junction (mount point)
			sec, err := securityOf(next)
			if err != nil {
				return "", false, err
			}
			if !y.system(sec.owner) {
				return "", false, &Error{Path: next, What: "it is a link owned by " + name(sec.owner) + ", who can point it at a folder of theirs",
					Fix: "replace it with a folder or a link of your own"}
			}
			if a, ok := y.otherWriter(sec.aces, changeRights, false); ok {
				return "", false, &Error{Path: next, What: "it is a link that " + name(a.sid) + " may change (access " + hex(a.mask) + "), to point it at a folder of theirs",
					Fix: "replace it with a folder or a link of your own"}
			}
			if links++; links > maxLinks {
				return "", false, &os.PathError{Op: "resolve", Path: abs, Err: syscall.ELOOP}
			}
			target, err := os.Readlink(next)
			if err != nil {
				return "", false, err
			}
			if vol := filepath.VolumeName(target); vol != "" {
				cur, target = vol+`\`, target[len(vol):]
			} else if strings.HasPrefix(target, `\`) {
				cur = root
			}
			rest = append(split(target), rest...)
		case m.IsDir():
			if len(rest) > 0 { // the last folder is checked as trusted itself (own), not as above
				if err := above(next, y); err != nil {
					return "", false, err
				}
			}
			cur = next
		default:
			return "", false, &Error{Path: next, What: "it is not a folder (" + kind(m) + ")",
				Fix: "remove it or move it aside, or choose another folder"}
		}
	}
	return cur, true, nil
}

// split returns p's components, without empty ones and ".", either slash separating them.
func split(p string) []string {
	var out []string
	for _, c := range strings.FieldsFunc(p, func(r rune) bool { return r == '\\' || r == '/' }) {
		if c != "." {
			out = append(out, c)
		}
	}
	return out
}

// above checks a folder that holds the one trusted: owned by this user or Windows, and no one
// else may rename or remove what is in it.
func above(path string, y you) error {
	sec, err := securityOf(path)
	if err != nil {
		return err
	}
	if !y.system(sec.owner) {
		return &Error{Path: path, What: "it is owned by " + name(sec.owner) + " (you are " + name(y.user) + "), who can rename or replace what is in it",
			Fix: "choose a folder outside " + path}
	}
	if a, ok := y.otherWriter(sec.aces, replaceRights, false); ok {
		return &Error{Path: path, What: "its access list lets " + name(a.sid) + " rename or replace what is in it (access " + hex(a.mask) + ")",
			Fix: "choose a folder outside " + path + ", or remove that entry (icacls \"" + path + "\")"}
	}
	return nil
}

// own checks the folder trusted itself: owned by this user, and no one else may change it or
// what will be made in it.
func own(path string, y you) error {
	sec, err := securityOf(path)
	if err != nil {
		return err
	}
	if !y.mine(sec.owner) {
		return &Error{Path: path, What: "it is owned by " + name(sec.owner) + ", not by you (" + name(y.user) + "): another user may have made it first, to read and change what agent-rewind keeps there",
			Fix: "use a folder of your own, or, if this one is yours, take it back (icacls \"" + path + "\" /setowner \"%USERNAME%\", as an administrator)"}
	}
	if a, ok := y.otherWriter(sec.aces, changeRights, true); ok {
		return &Error{Path: path, What: "its access list lets " + name(a.sid) + " change what is in it (access " + hex(a.mask) + ")",
			Fix: "keep it to yourself: icacls \"" + path + "\" /inheritance:r /grant:r \"%USERNAME%:(OI)(CI)F\" \"SYSTEM:(OI)(CI)F\""}
	}
	return nil
}

// hex is an access mask as Windows writes it.
func hex(mask uint32) string { return "0x" + strconv.FormatUint(uint64(mask), 16) }

func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	case m&fs.ModeIrregular != 0:
		return "a reparse point"
	case m.IsRegular():
		return "a file"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "not a folder"
}
