package jsonl_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/agent-rewind/rewind/internal/jsonl"
)

// A log whose writer was killed mid-line still reads: the torn line is left out.
func Example() {
	dir, _ := os.MkdirTemp("", "jsonl-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "calls.jsonl")
	os.WriteFile(path, []byte("{\"id\":\"toolu_1\"}\n{\"id\":\"toolu_2\"}\n{\"id\":\"tool"), 0o600)
	calls, err := jsonl.Read[struct{ ID string }](path, nil)
	fmt.Println(len(calls), calls[1].ID, err)
	// Output: 2 toolu_2 <nil>
}
