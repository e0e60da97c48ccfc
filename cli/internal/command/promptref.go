package command

import (
	"github.com/agent-rewind/rewind/cli/internal/prompts"
	"github.com/agent-rewind/rewind/snapshot"
)

// promptCall resolves a rewind's "prompt:N" (list numbers the logged prompts) to the first
// tool call made for prompt N, whose automatic checkpoint holds the state before the prompt's
// work. ok is false when ref is not of that form.
func (s *snapshotSession) promptCall(ref string) (call snapshot.CallRecord, ok bool, err error) {
	n, ok, err := prompts.ParseRef(ref)
	if !ok || err != nil {
		return call, ok, err
	}
	tl, err := s.store.List()
	if err != nil {
		return call, true, err
	}
	ps, err := prompts.Read(s.ws.Path(prompts.File))
	if err != nil {
		return call, true, err
	}
	_, call, err = prompts.FirstCall(ps, tl.Sessions, n)
	return call, true, err
}
