package mockmodel_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/agent-rewind/rewind/tools/agents/mockmodel"
)

// A Sequence that runs one shell command, served as Chat Completions: the model answers the
// first request with the call, and once the client sends its result, with the final text.
func Example_chatCompletions() {
	s, err := mockmodel.Start(mockmodel.Sequence("done",
		mockmodel.Call(map[string]any{"commands": []string{"git push"}}, "run_commands")))
	if err != nil {
		panic(err)
	}
	defer s.Close()
	ask := func(body string) string {
		resp, err := http.Post(s.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			panic(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	tools := `"tools":[{"type":"function","function":{"name":"run_commands"}}]`
	first := ask(`{"model":"m","messages":[{"role":"user","content":"push it"}],` + tools + `}`)
	fmt.Println(strings.Contains(first, `"name":"run_commands"`), strings.Contains(first, `"finish_reason":"tool_calls"`))

	id := s.Log()[0].Turn.ToolCalls[0].ID
	second := ask(`{"model":"m","messages":[{"role":"user","content":"push it"},` +
		`{"role":"assistant","tool_calls":[{"id":"` + id + `","type":"function","function":{"name":"run_commands","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"` + id + `","content":"refused: already pushed"}],` + tools + `}`)
	fmt.Println(strings.Contains(second, `"content":"done"`))
	fmt.Println(s.Log()[1].Conversation.Results()[0].Text)
	// Output:
	// true true
	// true
	// refused: already pushed
}
