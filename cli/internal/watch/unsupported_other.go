//go:build !linux && !windows

package watch

import (
	"context"
	"errors"
	"os"
)

// Supported reports whether this system has a watcher: elsewhere than Linux and Windows (macOS included) the
// checkpoint keeps the stat walk.
const Supported = false

// OnByDefault: there is no watcher to use here.
const OnByDefault = false

// Run reports that there is no watcher here.
func Run(ctx context.Context, o Options) error {
	return errors.New("no change watcher on this system: checkpoints walk the whole tree")
}

// askLocal: no watcher runs here.
func askLocal(store string, req Request) (Reply, bool) { return Reply{}, false }

// ownMountNS: no watcher answers here.
func ownMountNS() string { return "" }

// errFile: no watcher starts here.
func errFile(dir string) (*os.File, error) { return nil, errors.ErrUnsupported }
