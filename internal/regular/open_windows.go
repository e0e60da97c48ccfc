package regular

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// open opens name with flag and perm and returns it with its size, or fails unless it is a
// regular file. Windows has no FIFOs in the file namespace (its pipes live under \\.\pipe\), so
// no open can block; what is left is the symlink rule for state files. Windows cannot open with
// "no follow" through os, so a state file's name is read with Lstat first, and the handle opened
// must be that same file: a reparse point put there in between leads elsewhere and is refused.
func open(name string, flag int, perm fs.FileMode, input bool) (*os.File, int64, error) {
	var named fs.FileInfo
	if !input {
		fi, err := os.Lstat(name)
		switch {
		case err == nil && !fi.Mode().IsRegular():
			return nil, 0, &NotRegularError{Path: name, Type: fi.Mode().Type()}
		case err == nil:
			named = fi
		case !errors.Is(err, fs.ErrNotExist):
			return nil, 0, err
		}
	}
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		stat := os.Stat
		if !input {
			stat = os.Lstat
		}
		if fi, serr := stat(name); serr == nil && !fi.Mode().IsRegular() {
			return nil, 0, &NotRegularError{Path: name, Type: fi.Mode().Type(), Input: input}
		}
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, &NotRegularError{Path: name, Type: fi.Mode().Type(), Input: input}
	}
	if !input {
		if named == nil {
			// Created by this open, or by another process just before it: the name must
			// still be a plain file, not a reparse point to the file the handle holds.
			named, err = os.Lstat(name)
			if err != nil {
				f.Close()
				return nil, 0, err
			}
			if !named.Mode().IsRegular() {
				f.Close()
				return nil, 0, &NotRegularError{Path: name, Type: named.Mode().Type()}
			}
		}
		if !os.SameFile(named, fi) {
			f.Close()
			return nil, 0, &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("replaced while it was opened; try again")}
		}
	}
	return f, fi.Size(), nil
}
