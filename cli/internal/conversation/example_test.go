package conversation_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agent-rewind/rewind/cli/internal/conversation"
	"github.com/agent-rewind/rewind/cli/internal/transcript"
	"github.com/agent-rewind/rewind/snapshot"
)

// recorder prints the chain entry instead of appending it.
type recorder struct{}

func (recorder) Record(kind string, data any) (int64, error) {
	e := data.(conversation.Entry)
	fmt.Println("chain:", kind, "call", e.Call, "client", e.Client, "sha256s", len(e.OriginalSHA256), len(e.ForkSHA256))
	return 1, nil
}

// A Claude Code session made two tool calls, each after an automatic checkpoint; the
// conversation is planned to end before the second, its files rewound, then the fork written.
func Example() {
	tmp, _ := os.MkdirTemp("", "conversation-example")
	defer os.RemoveAll(tmp)
	root, home := filepath.Join(tmp, "shop"), filepath.Join(tmp, "home")
	os.MkdirAll(root, 0o755)
	store, _ := snapshot.Open(root, snapshot.Options{StateDir: filepath.Join(tmp, "store")})
	const session = "0b7e3f52-1c7a-4c0e-9a51-6f0e2d4c8a11"
	for i, id := range []string{"toolu_1", "toolu_2"} {
		store.AutoCheckpoint(context.Background(), snapshot.ToolCall{ID: id, Tool: "Bash", Session: session, Agent: "claude-code"}, nil)
		os.WriteFile(filepath.Join(root, "v"), []byte{'1' + byte(i)}, 0o644)
	}
	dir := filepath.Join(home, ".claude", "projects", "-shop")
	os.MkdirAll(dir, 0o700)
	line := func(typ, uuid, content string) string {
		return `{"type":"` + typ + `","version":"2.1.328","sessionId":"` + session + `","uuid":"` + uuid + `","message":{"id":"m` + uuid + `","role":"` + typ + `","content":` + content + "}}\n"
	}
	os.WriteFile(filepath.Join(dir, session+".jsonl"), []byte(line("user", "u1", `"bump it"`)+
		line("assistant", "a1", `[{"type":"tool_use","id":"toolu_1"}]`)+
		line("user", "r1", `[{"type":"tool_result","tool_use_id":"toolu_1"}]`)+
		line("assistant", "a2", `[{"type":"tool_use","id":"toolu_2"}]`)), 0o600)

	plan, err := conversation.Plan(store, filepath.Join(tmp, "store", "prompts.jsonl"), transcript.Where{Home: home}, "toolu_2")
	if err != nil {
		fmt.Println(err)
		return
	}
	res, _ := store.Rewind(context.Background(), plan.Call.Checkpoint, snapshot.RestoreOptions{})
	written, _, err := plan.Commit(recorder{}, res.OpID, res.To)
	v, _ := os.ReadFile(filepath.Join(root, "v"))
	fmt.Println("files: v =", string(v), "; fork written:", written, err, "; drops", plan.Fork.DroppedCalls)
	// Output:
	// chain: conversation call toolu_2 client claude-code sha256s 64 64
	// files: v = 1 ; fork written: true <nil> ; drops [toolu_2]
}
