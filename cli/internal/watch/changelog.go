//go:build linux || windows

package watch

import (
	"fmt"
	"iter"
)

// maxTracked caps the changed paths kept: past it they are dropped, and tokens older than the
// drop are refused (a full walk costs about the same as that many paths).
const maxTracked = 100000

// changeLog numbers the changes a watcher sees: each changed path with the number of its last
// change. A token names a number in it (token.go).
type changeLog struct {
	seq     uint64
	changes map[string]uint64 // path -> the number of its last change
	lostAt  uint64            // tokens before this number are refused
}

// mark records that path p changed. Called with the tree's mu held.
func (c *changeLog) mark(p string) {
	if c.changes == nil {
		c.changes = map[string]uint64{}
	}
	c.seq++
	c.changes[p] = c.seq
	if len(c.changes) > maxTracked {
		clear(c.changes)
		c.lostAt = c.seq
	}
}

// check says why token tok, for watcher id, cannot be answered from the log ("" when it can),
// and the number it names.
func (c *changeLog) check(id, tok string) (n uint64, refused string) {
	wid, n, ok := parseToken(tok)
	switch {
	case tok == "":
		return 0, "no token yet: this is the first checkpoint this watcher sees"
	case !ok:
		return 0, fmt.Sprintf("token %q is not <id>:<number>", tok)
	case wid != id:
		return 0, "the token is from an earlier watcher (it was restarted)"
	case n > c.seq:
		return 0, fmt.Sprintf("token %q is ahead of the watcher (%d)", tok, c.seq)
	case n < c.lostAt:
		return 0, "changes since the token were too many to keep"
	}
	return n, ""
}

// token is the position now, for watcher id.
func (c *changeLog) token(id string) string { return fmt.Sprintf("%s:%d", id, c.seq) }

// after yields the paths changed after number n.
func (c *changeLog) after(n uint64) iter.Seq[string] {
	return func(yield func(string) bool) {
		for p, s := range c.changes {
			if s > n && !yield(p) {
				return
			}
		}
	}
}
