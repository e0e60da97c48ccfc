package barrier

import (
	"errors"
	"fmt"
)

// Answer is what the guard process writes and how it exits, in the protocol of the agent that
// called it. The CLI writes Stdout and Stderr as they are and exits with ExitCode.
type Answer struct {
	Stdout   string `json:"stdout,omitempty"`
	Stderr   string `json:"stderr,omitempty"`
	ExitCode int    `json:"exit_code"`
}

// Respond turns the outcome of one guard input into the answer for its agent, in the protocol
// its Client documents (Client.Answers): an admitted call, or one that is no effect, gets the
// client's "go ahead"; a refused call the client's refusal, with the reason for the model.
// Reports are never refused; an error handling one is exit 1 with the error on stderr, which
// clients show as a non-blocking hook error (the tool already ran or was denied).
//
// An error while deciding an effect (a bad rules file, a ledger or chain that cannot be
// written, no workspace to record in) fails closed: the call is refused with the error as the
// reason, because running it unrecorded is what the barrier exists to prevent. Input that could
// not be parsed (err is an *InputError) is refused too, in its client's protocol when
// ParseHookInput could tell the client (in.Agent), else with exit 2 and the error on stderr
// naming the inputs the guard knows, unless in.Event names a report, which exits 1 (shown, not
// blocking). The explicit form is admitted with exit 0 (the CLI prints the Decision itself) and
// refused with exit 2, the reason on stderr. d is the zero Decision when nothing was decided.
func Respond(in Input, d Decision, err error) Answer {
	c := in.Client()
	var unread *InputError
	deciding := IsDecidingEvent(in.Event)
	if c != nil && c.Role(in.Event) != "" {
		deciding = c.Role(in.Event) == RoleDecide
	}
	switch {
	case errors.As(err, &unread) && deciding:
		return refuse(in, "", "input", fmt.Sprintf("agent-rewind guard refused this call: it could not read the hook input, so the call would run unrecorded: %v", err))
	case errors.As(err, &unread):
		return Answer{Stderr: fmt.Sprintf("agent-rewind guard: %v\n", err), ExitCode: 1}
	case err != nil && deciding:
		if d.Refused() { // refused, and the refusal could not be recorded: still refused
			return refuse(in, d.Key, string(d.Code), d.Reason)
		}
		reason := fmt.Sprintf("agent-rewind could not check this call against its effect ledger, so it is refused: %v. Tell the user: they can fix the cause and retry.", err)
		return refuse(in, d.Key, "error", reason)
	case err != nil:
		return Answer{Stderr: fmt.Sprintf("agent-rewind guard: %s %s: %v\n", in.Agent, in.Event, err), ExitCode: 1}
	case d.Refused():
		return refuse(in, d.Key, string(d.Code), d.Reason)
	case c != nil:
		return c.allow(in, deciding)
	}
	return Answer{}
}

// refuse is the client's refusal (exit 2 with the reason on stderr for the explicit form and
// for input whose client is unknown).
func refuse(in Input, key, code, reason string) Answer {
	user := "agent-rewind refused this call"
	if key != "" {
		user = fmt.Sprintf("agent-rewind refused effect %s (%s)", quoteKey(key), code)
	}
	if c := in.Client(); c != nil {
		return c.refuse(in, user, reason)
	}
	return exitTwo(in, user, reason)
}
