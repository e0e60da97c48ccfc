package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// clearOut removes from the output folder what an earlier release wrote there (binaries,
// SHA256SUMS, npm tarballs and their staging folder), so that the folder holds this run's
// artifacts alone and SHA256SUMS describes all of it. A file a release does not write is left
// alone and stops the run: the folder is not a release folder, and deleting it is not ours to do.
func clearOut(dir string, log io.Writer) error {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	} else if err != nil {
		return err
	}
	var stale, foreign []string
	for _, e := range entries {
		if isArtifact(e.Name(), e.IsDir()) {
			stale = append(stale, e.Name())
		} else {
			foreign = append(foreign, e.Name())
		}
	}
	if len(foreign) > 0 {
		return fmt.Errorf("the output folder %s holds %s, which a release does not write: give -out an empty or new folder, or remove them", dir, strings.Join(foreign, ", "))
	}
	for _, name := range stale {
		fmt.Fprintf(log, "release: removing %s from an earlier run\n", filepath.Join(dir, name))
		if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return nil
}

// isArtifact reports whether a release writes a file or folder of that name in its output
// folder: agent-rewind-* (binaries, hook binaries, npm tarballs), SHA256SUMS and npm/.
func isArtifact(name string, dir bool) bool {
	if dir {
		return name == "npm"
	}
	return name == "SHA256SUMS" || strings.HasPrefix(name, "agent-rewind-")
}
