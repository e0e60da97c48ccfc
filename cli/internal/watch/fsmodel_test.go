//go:build linux || windows

package watch

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agent-rewind/rewind/snapshot"
)

// fsModel applies random file operations to a tree.
type fsModel struct {
	root       string
	rng        *rand.Rand
	n          int
	noSymlinks bool // where none can be made (Wine makes ones it cannot find)
}

func (m *fsModel) all(dirsOnly bool) []string {
	var out []string
	filepath.WalkDir(m.root, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == m.root {
			return nil
		}
		rel, _ := filepath.Rel(m.root, p)
		if !dirsOnly || d.IsDir() {
			out = append(out, rel)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

func (m *fsModel) pick(dirsOnly bool) string {
	all := m.all(dirsOnly)
	if len(all) == 0 {
		return ""
	}
	return all[m.rng.IntN(len(all))]
}

// dirFor picks a directory (possibly the root) to put something in.
func (m *fsModel) dirFor() string {
	if d := m.pick(true); d != "" && m.rng.IntN(3) > 0 {
		return d
	}
	return ""
}

func (m *fsModel) newName(prefix string) string {
	m.n++
	return filepath.Join(m.dirFor(), fmt.Sprintf("%s%d", prefix, m.n))
}

// step applies one random operation and returns what it did. Errors of operations that raced
// (a path gone meanwhile) are ignored: the tree is whatever it is, and that is what is compared.
func (m *fsModel) step() string {
	abs := func(rel string) string { return filepath.Join(m.root, rel) }
	switch op := m.rng.IntN(12); op {
	case 0: // create
		p := m.newName("f")
		os.WriteFile(abs(p), []byte(fmt.Sprint("new ", m.n)), 0o644)
		return "create " + p
	case 1: // write
		p := m.pick(false)
		if st, err := os.Lstat(abs(p)); err == nil && st.Mode().IsRegular() {
			os.WriteFile(abs(p), []byte(fmt.Sprint("write ", m.rng.Int())), 0o644)
		}
		return "write " + p
	case 2: // delete a file or symlink
		p := m.pick(false)
		if st, err := os.Lstat(abs(p)); err == nil && !st.IsDir() {
			os.Remove(abs(p))
		}
		return "delete " + p
	case 3, 4: // rename a file or a whole directory
		p := m.pick(op == 4)
		if p == "" {
			return "rename none"
		}
		to := m.newName("r")
		if strings.HasPrefix(to+"/", p+"/") {
			return "rename into itself"
		}
		os.Rename(abs(p), abs(to))
		return "rename " + p + " " + to
	case 5: // chmod
		p := m.pick(false)
		if st, err := os.Lstat(abs(p)); err == nil && st.Mode()&os.ModeSymlink == 0 {
			mode := os.FileMode(0o600)
			if st.IsDir() {
				mode = 0o700
			}
			if m.rng.IntN(2) == 0 {
				mode |= 0o055
			}
			os.Chmod(abs(p), mode)
		}
		return "chmod " + p
	case 6: // symlink create or retarget
		if m.noSymlinks {
			return "no symlink"
		}
		p := m.pick(false)
		if st, err := os.Lstat(abs(p)); err == nil && st.Mode()&os.ModeSymlink != 0 {
			os.Remove(abs(p))
			os.Symlink(fmt.Sprint("target", m.rng.IntN(100)), abs(p))
			return "retarget " + p
		}
		q := m.newName("l")
		os.Symlink(fmt.Sprint("target", m.rng.IntN(100)), abs(q))
		return "symlink " + q
	case 7, 8: // mkdir, with a file inside sometimes
		p := m.newName("d")
		os.MkdirAll(abs(filepath.Join(p, "sub")), 0o755)
		if m.rng.IntN(2) == 0 {
			os.WriteFile(abs(filepath.Join(p, "sub", "in")), []byte("in"), 0o644)
		}
		return "mkdir " + p
	case 9: // rmdir (the whole subtree)
		p := m.pick(true)
		if p != "" {
			os.RemoveAll(abs(p))
		}
		return "rmdir " + p
	case 10: // a hard link: a later write through one name changes every name
		p := m.pick(false)
		if st, err := os.Lstat(abs(p)); err == nil && st.Mode().IsRegular() {
			q := m.newName("h")
			os.Link(abs(p), abs(q))
			return "link " + p + " " + q
		}
		return "link none"
	default: // excluded folder traffic
		os.MkdirAll(abs("build"), 0o755)
		os.WriteFile(abs(filepath.Join("build", fmt.Sprint(m.rng.IntN(5)))), []byte(fmt.Sprint(m.rng.Int())), 0o644)
		return "build"
	}
}

func entryDiff(a, b []snapshot.Entry) string {
	am, bm := map[string]snapshot.Entry{}, map[string]snapshot.Entry{}
	for _, e := range a {
		am[e.Path] = e
	}
	for _, e := range b {
		bm[e.Path] = e
	}
	var out []string
	for p, e := range am {
		if f, ok := bm[p]; !ok {
			out = append(out, fmt.Sprintf("only assisted: %+v", e))
		} else if f != e {
			out = append(out, fmt.Sprintf("differs: %+v vs walk %+v", e, f))
		}
	}
	for p, e := range bm {
		if _, ok := am[p]; !ok {
			out = append(out, fmt.Sprintf("only walk: %+v", e))
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}
