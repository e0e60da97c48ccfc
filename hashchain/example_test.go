package hashchain_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/agent-rewind/rewind/hashchain"
)

func Example() {
	dir, _ := os.MkdirTemp("", "hashchain-example-")
	defer os.RemoveAll(dir)
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

	// Open (creating) a chain, anchored outside its directory, and record two events.
	chain, err := hashchain.Open(filepath.Join(dir, "chain.jsonl"), hashchain.Options{
		Create: true,
		Anchor: filepath.Join(dir, "state", "head"),
		Clock:  func() time.Time { return clock },
	})
	if err != nil {
		log.Fatal(err)
	}
	defer chain.Close()
	chain.Append("checkpoint", map[string]any{"id": "cp-1", "files": 12})
	e, _ := chain.Append("effect", map[string]any{"key": "deploy:prod", "admitted": true})
	fmt.Println(e.Seq, e.Kind, string(e.Data))

	// The head is a C2SP checkpoint; anyone holding the file can verify it against the head.
	head, _ := chain.Head()
	fmt.Print(head.Checkpoint())
	report, err := hashchain.VerifyFile(chain.Path(), hashchain.VerifyOptions{Head: &head, ExactHead: true})
	fmt.Println(report.Size, err)

	// An inclusion proof shows entry 1 is in the tree of that head.
	proof, _ := chain.ProveInclusion(1, head.Size)
	fmt.Println(hashchain.CheckInclusion(proof, head, 1, e.Hash))
	// Output:
	// 1 effect {"admitted":true,"key":"deploy:prod"}
	// agent-rewind/4a54661798d0436a980f3a4a579bd2b5
	// 2
	// /O25JmkptlQtEoRV39Jq7jmayv2nsITJ/fhW7RQOs5c=
	// 2 <nil>
	// <nil>
}
