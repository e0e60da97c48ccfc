package baseline

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"

	"github.com/agent-rewind/rewind/tools/bench/measure"
)

// StatWalk visits every entry under root and lstats it, skipping directories whose name is in
// skip, and returns how many entries it saw. It is the floor for a checkpoint that must notice
// any change: the bench command runs it in a child process ("statwalk") so that it pays the
// same process start as the programs it is compared with.
func StatWalk(root string, skip ...string) (int, error) {
	n := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && slices.Contains(skip, d.Name()) {
			return filepath.SkipDir
		}
		if _, err := d.Info(); err != nil { // lstat(2) for entries read from a directory
			return err
		}
		n++
		return nil
	})
	return n, err
}

// Find runs find(1) over root doing an lstat of every entry (printing each size to /dev/null
// forces the lstat that find would otherwise skip), pruning directories named in skip, and
// reports its wall time and peak RSS.
func Find(ctx context.Context, root string, skip ...string) (measure.Sample, error) {
	find, err := exec.LookPath("find")
	if err != nil {
		return measure.Sample{}, fmt.Errorf("stat walk: find is not on PATH: %w", err)
	}
	args := []string{root}
	for _, s := range skip {
		args = append(args, "-name", s, "-prune", "-o")
	}
	args = append(args, "-printf", "%s\n")
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return measure.Sample{}, err
	}
	defer devnull.Close()
	cmd := exec.CommandContext(ctx, find, args...)
	cmd.Stdout = devnull
	r, err := measure.Run(cmd)
	return r.Sample, err
}

// True runs true(1), the process-start floor, and reports its wall time and peak RSS.
func True(ctx context.Context) (measure.Sample, error) {
	t, err := exec.LookPath("true")
	if err != nil {
		return measure.Sample{}, fmt.Errorf("process-start floor: true is not on PATH: %w", err)
	}
	r, err := measure.Run(exec.CommandContext(ctx, t))
	return r.Sample, err
}

// DirBytes returns the total size of the regular files under dir (the apparent size, as
// "du --apparent-size -b" counts it, without directory entries).
func DirBytes(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			n += info.Size()
		}
		return nil
	})
	return n, err
}
