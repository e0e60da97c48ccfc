package command

import (
	"fmt"
	"io"

	"github.com/agent-rewind/rewind/barrier"
)

// ReleaseCmd re-arms an effect key. It is a person's action, after reconciling what happened
// in the outside world: the CLI offers it, the MCP server never does. The release is recorded
// on the chain with its reason.
type ReleaseCmd struct {
	Key    string `arg:"" help:"The effect key, exactly as the refusal or \"agent-rewind effects\" names it."`
	Reason string `required:"" help:"Why the key may fire again (recorded on the chain), e.g. \"the charge was refunded\" or \"denied at the prompt, never ran\"." placeholder:"TEXT"`
}

// releasedBy names a person at the command line in the record and on the chain.
const releasedBy = "cli"

// Run releases the key and prints what was released and its history. A key already released
// is left as it is (exit 0, nothing recorded).
func (c *ReleaseCmd) Run(env *Env) error {
	ws, err := openWorkspace(env)
	if err != nil {
		return err
	}
	defer ws.Close()
	l, err := ws.Ledger()
	if err != nil {
		return err
	}
	d, err := l.Release(c.Key, c.Reason, releasedBy)
	if err != nil {
		return err
	}
	return env.Emit(d, func(w io.Writer) error {
		if d.Code == barrier.CodeUnchanged {
			fmt.Fprintf(w, "%q is already released: nothing recorded\n", d.Key)
		} else {
			from := ""
			if n := len(d.Record.History); n > 0 {
				from = string(d.Record.History[n-1].From)
			}
			fmt.Fprintf(w, "released %q (it was %s), chain entry %d: its next admission is generation %d\n", d.Key, from, *d.Seq, d.Record.Generation+1)
		}
		return writeRecord(w, d.Record)
	})
}
