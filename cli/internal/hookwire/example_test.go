package hookwire_test

import (
	"bytes"
	"fmt"

	"github.com/agent-rewind/rewind/cli/internal/hookwire"
)

// A call travels as one length-prefixed message, read back whole by the other side.
func Example() {
	msg := hookwire.AppendRequest(nil, &hookwire.Request{
		Op: hookwire.OpGuard, Version: "v1.2.3", Dir: "/work/app",
		StdinRead: true, Stdin: []byte(`{"hook_event_name":"PreToolUse"}`),
		Args: []string{"guard", "--checkpoint"}, Env: []string{"HOME=/home/ada"},
	})
	p, err := hookwire.ReadMessage(bytes.NewReader(msg))
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := hookwire.DecodeRequest(p)
	fmt.Println(r.Op, r.Dir, r.Args, string(r.Stdin), err)
	// Output: guard /work/app [guard --checkpoint] {"hook_event_name":"PreToolUse"} <nil>
}
