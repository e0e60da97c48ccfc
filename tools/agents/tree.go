package agents

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// Tree is every file, folder and symlink under a folder, by slash path: what a rewind must put
// back byte for byte. The .git folder is part of it, as it is of a checkpoint.
type Tree map[string]Node

// Node is one entry of a Tree.
type Node struct {
	Mode fs.FileMode // type and permission bits
	Data string      // a file's content, a symlink's target
}

// ReadTree reads the tree under dir.
func ReadTree(dir string) (Tree, error) {
	t := Tree{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		n := Node{Mode: info.Mode() & (fs.ModeType | fs.ModePerm)}
		switch {
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			n.Data = string(b)
		case d.Type()&fs.ModeSymlink != 0:
			if n.Data, err = os.Readlink(p); err != nil {
				return err
			}
		}
		t[filepath.ToSlash(rel)] = n
		return nil
	})
	return t, err
}

// Diff returns the paths that differ from a to b, each with how: "+" added, "-" removed, "~"
// changed (content, mode or type). Empty means byte-identical.
func Diff(a, b Tree) []string {
	var out []string
	for p, n := range a {
		m, ok := b[p]
		switch {
		case !ok:
			out = append(out, "- "+p)
		case m != n:
			out = append(out, fmt.Sprintf("~ %s (%v %dB -> %v %dB)", p, n.Mode, len(n.Data), m.Mode, len(m.Data)))
		}
	}
	for p := range b {
		if _, ok := a[p]; !ok {
			out = append(out, "+ "+p)
		}
	}
	slices.Sort(out)
	return out
}
