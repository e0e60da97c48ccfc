package watch

import (
	"fmt"
	"time"

	"github.com/agent-rewind/rewind/snapshot"
)

// askTimeout bounds a question to the watcher (which itself refuses after catchUp): a watcher
// that does not answer within it (stopped, hung) is replaced (hintFor).
const askTimeout = 2 * time.Second

// Hint asks the store's watcher what changed in the workspace root since checkpoint current,
// the current position. It returns the hint (nil when there is none to trust, and then why),
// and the token to record with the checkpoint taken next (WritePosition), "" for none. err is
// ErrNotRunning when no watcher answers, and another error when one did not answer.
func Hint(store, root, current string) (hint *snapshot.Changed, token, why string, err error) {
	pos := ReadPosition(store)
	tok := ""
	if current != "" && pos.Checkpoint == current {
		tok = pos.Token
	}
	r, err := Ask(store, Request{Op: "since", Token: tok}, askTimeout)
	if err != nil {
		return nil, "", err.Error(), err
	}
	switch {
	case r.Root != root:
		return nil, "", fmt.Sprintf("the watcher watches %s, not %s (the workspace's folder was moved, or is reached by another path)", r.Root, root), nil
	case r.MountNS != ownMountNS():
		return nil, "", fmt.Sprintf("the watcher runs in another mount namespace (%s, this checkpoint in %s): it does not see the same mounts", r.MountNS, ownMountNS()), nil
	case current == "":
		return nil, r.Token, "no checkpoint yet", nil
	case pos.Checkpoint != current:
		return nil, r.Token, "the current position was not checkpointed with the watcher (a rewind, or a checkpoint taken without it)", nil
	case r.Refused != "":
		return nil, r.Token, "the watcher: " + r.Refused, nil
	}
	return &snapshot.Changed{Since: current, Paths: r.Paths, Mounts: r.Mounts, Linked: r.Linked}, r.Token, "", nil
}
