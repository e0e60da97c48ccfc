package workspace

import (
	"errors"
	"fmt"
)

// ErrStoreGone reports that the store a long-lived process opened was removed, moved or
// replaced under it, or that its workspace folder was.
var ErrStoreGone = errors.New("the workspace's store changed under this process")

// Check reports, with ErrStoreGone, whether the store folder this workspace opened and the
// workspace folder itself are still the ones it opened (the same identity at the same path).
// A long-lived process (the MCP server) calls it before every operation, so that it fails
// loudly instead of writing into deleted files or making a partial store again.
func (w *Workspace) Check() error {
	if w.Meta == "" {
		return nil
	}
	if id, err := identityOf(w.Meta); err != nil || !id.same(w.metaID) {
		what := "replaced by another folder"
		if err != nil {
			what = "removed or moved"
		}
		return fmt.Errorf("%w: the store %s of workspace %s was %s after this process opened it; nothing was written: restart the process (the MCP server: restart the agent's session) to open the store that is there now", ErrStoreGone, w.Meta, w.Root, what)
	}
	if id, err := identityOf(w.Root); err != nil || !id.same(w.Identity) {
		return fmt.Errorf("%w: the workspace folder %s was removed, moved or replaced after this process opened it; nothing was written: restart the process in the workspace", ErrStoreGone, w.Root)
	}
	return nil
}
