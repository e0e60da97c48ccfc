package upkeep_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/agent-rewind/rewind/snapshot/internal/objects"
	"github.com/agent-rewind/rewind/snapshot/internal/upkeep"
)

// A store with two packs, one object each; the sweep keeps one object and removes the other's
// pack whole.
func Example() {
	state, err := os.MkdirTemp("", "upkeep-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(state)
	for _, d := range []string{"objects", "packs", "manifests", "checkpoints"} {
		if err := os.MkdirAll(filepath.Join(state, d), 0o700); err != nil {
			panic(err)
		}
	}
	o := objects.New(state)
	put := func(data string) objects.Hash {
		stg := objects.NewStager(o)
		h := objects.Sum([]byte(data))
		if err := stg.PutBytes(h, []byte(data)); err != nil {
			panic(err)
		}
		if err := stg.Commit(); err != nil {
			panic(err)
		}
		return h
	}
	kept, dropped := put("kept"), put("dropped")

	live := upkeep.NewLive()
	live.Objects[kept] = true
	swept, err := upkeep.Sweep{Objects: o, StateDir: state, Live: live, Now: time.Now()}.Run(context.Background())
	if err != nil {
		panic(err)
	}
	o.Forget()
	hasKept, _ := o.Has(kept)
	hasDropped, _ := o.Has(dropped)
	fmt.Println("objects removed:", swept.Objects, "bytes:", swept.Bytes)
	fmt.Println("kept stored:", hasKept, "dropped stored:", hasDropped)
	// Output:
	// objects removed: 1 bytes: 7
	// kept stored: true dropped stored: false
}
