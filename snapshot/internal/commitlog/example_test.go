package commitlog_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/agent-rewind/rewind/snapshot/internal/commitlog"
)

func Example() {
	dir, _ := os.MkdirTemp("", "commitlog")
	defer os.RemoveAll(dir)
	const boot = "5b3c2a1e-0f9d-4c8b-a7e6-d5c4b3a29180"
	l, _ := commitlog.Open(filepath.Join(dir, "log"), boot)
	// One commit: the files it writes, whole, synced once.
	l.Append(commitlog.Record{Files: []commitlog.File{
		{Name: "checkpoints/3f2a9c01b2de", Data: []byte("{}\n")},
		{Name: "position", Data: []byte(`{"current":"3f2a9c01b2de"}` + "\n")},
	}})
	last, ok, _ := l.Last()
	pos, _ := last.Find("position")
	fmt.Println(ok, len(last.Files), string(pos))
	l.Close()
	// Output: true 2 {"current":"3f2a9c01b2de"}
}
