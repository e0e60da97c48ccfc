package watch

import (
	"time"

	"github.com/agent-rewind/rewind/snapshot"
)

// askTimeout bounds a question to the watcher (which itself waits at most catchUp).
const askTimeout = 5 * time.Second

// Hint asks the store's watcher what changed since checkpoint current, the current position.
// It returns the hint (nil when there is none to trust, and then why), and the token to record
// with the checkpoint taken next (WritePosition), "" for none. err is ErrNotRunning when no
// watcher answers.
func Hint(store, current string) (hint *snapshot.Changed, token, why string, err error) {
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
	case current == "":
		return nil, r.Token, "no checkpoint yet", nil
	case pos.Checkpoint != current:
		return nil, r.Token, "the current position was not checkpointed with the watcher (a rewind, or a checkpoint taken without it)", nil
	case r.Refused != "":
		return nil, r.Token, "the watcher: " + r.Refused, nil
	}
	return &snapshot.Changed{Since: current, Paths: r.Paths}, r.Token, "", nil
}
