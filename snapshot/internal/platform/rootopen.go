package platform

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// An os.Root keeps every open inside it but follows a symlink that stays inside, even asked
// for O_NOFOLLOW (Go resolves the link itself). The restore must act on the file a path names,
// never on what a link there points to, so each open below checks afterwards that the name is
// the file itself (sameFile: not a link, the same identity as the handle): a link there at the
// open, or swapped in since, is refused.

// OpenInRoot opens name in root for reading; a symlink there fails (IsSymlinkRefused). It does
// not block on a FIFO put there since a stat: a caller that wants a regular file checks its
// Stat before reading.
func OpenInRoot(root *os.Root, name string) (*os.File, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|noBlock, 0)
	if err != nil {
		return nil, err
	}
	if err := sameFile(f, filepath.Join(root.Name(), name)); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// OpenDirInRoot opens the directory name in root for reading; anything else there, a symlink
// to a directory included, fails.
func OpenDirInRoot(root *os.Root, name string) (*os.File, error) {
	f, err := OpenInRoot(root, name)
	if err != nil {
		return nil, err
	}
	if st, err := Fstat(f); err != nil || !st.IsDir() {
		f.Close()
		if err == nil {
			err = &fs.PathError{Op: "open", Path: name, Err: syscall.ENOTDIR}
		}
		return nil, err
	}
	return f, nil
}

// CreateInRoot creates name in root for writing, with mode perm (on Windows only its write
// bit counts: the read-only attribute); it fails when anything is already there, a symlink
// included (an exclusive create follows nothing).
func CreateInRoot(root *os.Root, name string, perm fs.FileMode) (*os.File, error) {
	return root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
}

// sameFile checks that name is, as itself (not a link), the regular file or directory f has
// open.
func sameFile(f *os.File, name string) error {
	opened, err := Fstat(f)
	if err != nil {
		return err
	}
	there, err := Lstat(name)
	if err != nil {
		return err
	}
	if (!there.IsRegular() && !there.IsDir()) || there.Ino != opened.Ino {
		return &fs.PathError{Op: "open", Path: name, Err: syscall.ELOOP}
	}
	return nil
}
