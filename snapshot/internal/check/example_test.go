package check_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agent-rewind/rewind/snapshot/internal/check"
	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
	"github.com/agent-rewind/rewind/snapshot/internal/objects"
	"github.com/agent-rewind/rewind/snapshot/internal/platform"
)

// noCheckpoints is the snapshot layer of a store that has no checkpoint yet.
type noCheckpoints struct{}

func (noCheckpoints) Checkpoint(string) (check.Checkpoint, bool, error) {
	return check.Checkpoint{}, false, nil
}
func (noCheckpoints) Manifest(objects.Hash) ([]manifest.Entry, error) {
	return nil, errors.New("no manifests")
}
func (noCheckpoints) Position() (string, string, error) { return "", "", nil }
func (noCheckpoints) HashFile(string, platform.Stat) (objects.Hash, error) {
	return objects.Hash{}, errors.New("no files")
}
func (noCheckpoints) LiveFiles(context.Context) ([]manifest.Entry, error) { return nil, nil }
func (noCheckpoints) OwnTemp(string) bool                                 { return false }

// A store whose only flaw is a file an interrupted write left in objects/tmp: check reports it
// as benign, and with Repair moves it aside to quarantine/.
func Example() {
	state, err := os.MkdirTemp("", "check-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(state)
	for _, d := range []string{"objects/tmp", "packs", "manifests", "checkpoints"} {
		if err := os.MkdirAll(filepath.Join(state, d), 0o700); err != nil {
			panic(err)
		}
	}
	if err := os.WriteFile(filepath.Join(state, "objects", "tmp", "obj-1"), []byte("half"), 0o600); err != nil {
		panic(err)
	}
	cfg := check.Config{Store: noCheckpoints{}, Objects: objects.New(state), StateDir: state, Root: state,
		Options: check.Options{Repair: true}}
	rep, err := check.Run(context.Background(), cfg)
	if err != nil {
		panic(err)
	}
	for _, sec := range rep.Sections {
		for _, p := range sec.Problems {
			fmt.Printf("%s: %s %s benign=%v repaired=%v\n", sec.Name, p.Kind, p.Where, p.Benign, p.Repaired)
		}
	}
	_, err = os.Stat(filepath.Join(state, "objects", "tmp", "obj-1"))
	fmt.Println("still in objects/tmp:", err == nil)
	// Output:
	// leftovers: leftover objects/tmp/obj-1 benign=true repaired=true
	// still in objects/tmp: false
}
