package mockanthropic_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/agent-rewind/rewind/tools/mockanthropic"
)

func Example() {
	s := mockanthropic.New(mockanthropic.Options{})
	s.Add([]byte(`{"model":"claude-sonnet-5-5","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`),
		[]byte(`{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-5-5",
		"content":[{"type":"text","text":"Hello!"}],"stop_reason":"end_turn","stop_sequence":null,
		"usage":{"input_tokens":8,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":3}}`))
	if err := s.Start(); err != nil {
		panic(err)
	}
	defer s.Close()

	req, _ := http.NewRequest("POST", s.URL+"/v1/messages", strings.NewReader(
		`{"stream":true,"model":"claude-sonnet-5-5","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("x-api-key", "sk-ant-example")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if name, ok := strings.CutPrefix(line, "event: "); ok {
			fmt.Println(name)
		}
	}
	fmt.Println("upstream calls:", s.Hits())
	// Output:
	// message_start
	// content_block_start
	// ping
	// content_block_delta
	// content_block_stop
	// message_delta
	// message_stop
	// upstream calls: 1
}
