package transcript_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/agent-rewind/rewind/cli/internal/transcript"
)

// A Claude Code session of two tool calls, forked to end before the second.
func Example() {
	home, _ := os.MkdirTemp("", "transcript-example")
	defer os.RemoveAll(home)
	const session = "0b7e3f52-1c7a-4c0e-9a51-6f0e2d4c8a11"
	dir := filepath.Join(home, ".claude", "projects", "-home-ann-shop")
	os.MkdirAll(dir, 0o700)
	lines := `{"type":"user","version":"2.1.328","sessionId":"` + session + `","uuid":"u1","parentUuid":null,"message":{"role":"user","content":"bump the version"}}
{"type":"assistant","version":"2.1.328","sessionId":"` + session + `","uuid":"a1","parentUuid":"u1","message":{"id":"msg_1","role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"echo 2 > v"}}]}}
{"type":"user","version":"2.1.328","sessionId":"` + session + `","uuid":"r1","parentUuid":"a1","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":""}]}}
{"type":"assistant","version":"2.1.328","sessionId":"` + session + `","uuid":"a2","parentUuid":"r1","message":{"id":"msg_2","role":"assistant","content":[{"type":"tool_use","id":"toolu_2","name":"Bash","input":{"command":"git push"}}]}}
`
	os.WriteFile(filepath.Join(dir, session+".jsonl"), []byte(lines), 0o600)

	f, err := transcript.Plan(transcript.Where{Home: home}, transcript.ClaudeCode, session, transcript.Cut{Call: "toolu_2"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("keeps", f.KeptMessages, "messages; drops", f.DroppedMessages, "with calls", f.DroppedCalls)
	if err := f.Write(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(filepath.Dir(f.Path) == dir, f.Resume == "claude --resume "+f.ForkSession)
	// Output:
	// keeps 3 messages; drops 1 with calls [toolu_2]
	// true true
}
