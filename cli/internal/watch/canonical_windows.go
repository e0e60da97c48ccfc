package watch

import (
	"fmt"
	"strings"

	"golang.org/x/sys/windows"

	"github.com/agent-rewind/rewind/internal/winpath"
)

// Names as the folders hold them. NTFS finds a name whatever its case, and a file may also have
// a short (8.3) name; the system may report a change under either, or in the case it was made
// through. A checkpoint looks a reported path up by name, which would find the file under any
// of them and record it twice. So each reported name is recorded as its folder holds it: every
// folder above it, and the name itself, are looked up (FindFirstFile gives the name stored).
// A name gone that the watcher cannot tell from another (a short name, or one its folder now
// holds in another case) widens to its folder, read whole.

// maxCanonical bounds the folders whose stored names are remembered.
const maxCanonical = 4096

// resolve is reported name rel as the folders hold it, and whether it exists now; gone says
// the change removed it (removed, renamed away). widened says that its folder is returned
// instead, to be read whole. It fails only when that folder would be the root.
func (t *tree) resolve(rel string, gone bool) (p string, exists, widened bool, err error) {
	parts := strings.Split(rel, "/")
	cp := ""
	for i, part := range parts {
		last := i == len(parts)-1
		rp := strings.Join(parts[:i+1], "/")
		if c, ok := t.canonical[rp]; ok && !last {
			cp = c
			continue
		}
		name, found := t.stored(join(cp, part))
		switch {
		case !found && strings.Contains(strings.Join(parts[i:], "/"), "~"):
			return t.widen(cp, rel)
		case !found:
			return join(cp, strings.Join(parts[i:], "/")), false, false, nil
		case last && gone && name != part:
			return t.widen(cp, rel)
		}
		cp = join(cp, name)
		if !last {
			if len(t.canonical) >= maxCanonical {
				clear(t.canonical)
			}
			t.canonical[rp] = cp
		}
	}
	return cp, true, false, nil
}

// widen is folder dir, which holds reported name rel, to be read whole.
func (t *tree) widen(dir, rel string) (string, bool, bool, error) {
	if dir == "" {
		return "", false, false, fmt.Errorf("a change was reported as %q, a short (8.3) name or one differing only in case from another, at the top of the workspace: checkpoints walk the tree until a new watcher starts", rel)
	}
	return dir, true, true, nil
}

// stored is the name the folder holds for rel's last element, whatever the case or short name
// it is given as; found is false when there is none.
func (t *tree) stored(rel string) (name string, found bool) {
	p, err := windows.UTF16PtrFromString(winpath.Long(t.full(rel)))
	if err != nil {
		return "", false
	}
	var fd windows.Win32finddata
	h, err := windows.FindFirstFile(p, &fd)
	if err != nil {
		return "", false // none, or unreadable: the name as reported, which the checkpoint looks at
	}
	windows.FindClose(h)
	return windows.UTF16ToString(fd.FileName[:]), true
}
