package restore

import (
	"fmt"
	"os"
	"strings"

	"github.com/agent-rewind/rewind/snapshot/internal/objects"
)

// checkParents verifies that every parent directory of p is a real directory (not a symlink).
// Each is checked with one lstat of its full path, top down, so that every component above it is
// already known to be a directory (through the os.Root, each check would open every component
// again: 15 opens for a file five folders deep). The check does not write; what follows it goes
// through the os.Root, which no symlink put there since can lead out of the workspace.
func (a *applier) checkParents(p string) error {
	for i := 0; i < len(p); i++ {
		if p[i] != '/' {
			continue
		}
		d := p[:i]
		a.mu.Lock()
		ok := a.verified[d]
		a.mu.Unlock()
		if ok {
			continue
		}
		fi, err := os.Lstat(a.full(d))
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrUnsafePath, a.full(d), objects.Bare(err))
		}
		if !fi.IsDir() {
			return fmt.Errorf("%w: %s is a %s, not a directory; nothing is written through it (move it away and retry)", ErrUnsafePath, a.full(d), describeMode(fi.Mode()))
		}
		a.mu.Lock()
		a.verified[d] = true
		a.mu.Unlock()
	}
	return nil
}

// forgetVerified drops what checkParents knew of the directory p and those under it: p was
// removed, or tried to be.
func (a *applier) forgetVerified(p string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for d := range a.verified {
		if d == p || strings.HasPrefix(d, p+"/") {
			delete(a.verified, d)
		}
	}
}
