package mockmodel_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/agent-rewind/rewind/tools/agents/mockmodel"
)

// A Sequence that runs one shell command, served as Gemini's streamGenerateContent: the model
// answers with a functionCall whose id is also in its thoughtSignature, so that when the client
// sends the call back under an id of its own (with the signature, as it must), the result is
// still read as the mock's call, and the sequence moves on.
func Example_gemini() {
	s, err := mockmodel.Start(mockmodel.Sequence("done",
		mockmodel.Call(map[string]string{"command": "git push"}, "run_shell_command")))
	if err != nil {
		panic(err)
	}
	defer s.Close()
	type part struct {
		Text             string          `json:"text,omitempty"`
		ThoughtSignature string          `json:"thoughtSignature,omitempty"`
		FunctionCall     json.RawMessage `json:"functionCall,omitempty"`
	}
	ask := func(contents string) part { // the first part of the streamed answer
		body := `{"contents":[` + contents + `],"tools":[{"functionDeclarations":[{"name":"run_shell_command"}]}]}`
		resp, err := http.Post(s.URL+"/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", "application/json", strings.NewReader(body))
		if err != nil {
			panic(err)
		}
		defer resp.Body.Close()
		line, _ := bufio.NewReader(resp.Body).ReadString('\n')
		var ev struct {
			Candidates []struct {
				Content struct{ Parts []part }
			}
		}
		if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev); err != nil {
			panic(err)
		}
		return ev.Candidates[0].Content.Parts[0]
	}
	user := `{"role":"user","parts":[{"text":"push it"}]}`
	first := ask(user)
	fmt.Println(string(first.FunctionCall))

	second := ask(user + `,{"role":"model","parts":[{"functionCall":{"id":"run_shell_command_1_0","name":"run_shell_command","args":{"command":"git push"}},` +
		`"thoughtSignature":"` + first.ThoughtSignature + `"}]},` +
		`{"role":"user","parts":[{"functionResponse":{"id":"run_shell_command_1_0","name":"run_shell_command","response":{"error":"refused: already pushed"}}}]}`)
	fmt.Println(second.Text)
	r := s.Log()[1].Conversation.Results()[0]
	fmt.Println(r.CallID, r.IsError, r.Text)
	// Output:
	// {"id":"call_mock_01_1","name":"run_shell_command","args":{"command":"git push"}}
	// done
	// call_mock_01_1 true refused: already pushed
}
