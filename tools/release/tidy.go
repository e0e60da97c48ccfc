package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/mod/modfile"
)

// TreeVersion is the version the tree's modules require of each other, read from go.work's
// replace directives (SetWorkReplaces writes them, one version for all).
func TreeVersion(root string) (string, error) {
	name := filepath.Join(root, "go.work")
	b, err := os.ReadFile(name)
	if err != nil {
		return "", err
	}
	wf, err := modfile.ParseWork(name, b, nil)
	if err != nil {
		return "", err
	}
	version := ""
	for _, r := range wf.Replace {
		if !strings.HasPrefix(r.Old.Path, modulePrefix) {
			continue
		}
		if version != "" && r.Old.Version != version {
			return "", fmt.Errorf("go.work replaces %s at %s but another module at %s: modules are released in lockstep, run go run ./tools/release tag", r.Old.Path, r.Old.Version, version)
		}
		version = r.Old.Version
	}
	if version == "" {
		return "", fmt.Errorf("go.work has no versioned replace of our modules: the workspace cannot resolve their required version")
	}
	return version, nil
}

// CheckTidy reports every module whose go.mod or go.sum go mod tidy would change, run as a
// consumer would (GOWORK=off) against a file proxy of this tree at the version it requires.
// Checksum lines of our own modules are left out of the comparison: they are the release's to
// write (tag), and between releases the tree's content differs from the released one.
func CheckTidy(ctx context.Context, root string) error {
	version, err := TreeVersion(root)
	if err != nil {
		return err
	}
	mods, err := LoadModules(root)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "release-tidy-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	proxy := filepath.Join(tmp, "proxy")
	for _, m := range mods {
		if err := AddToProxy(ctx, root, proxy, m, version); err != nil {
			return err
		}
	}
	upstream, err := exec.CommandContext(ctx, "go", "env", "GOPROXY").Output()
	if err != nil {
		return fmt.Errorf("go env GOPROXY: %v", err)
	}
	env := ConsumerEnv(proxy, strings.TrimSpace(string(upstream)))
	var untidy []string
	for i, m := range mods {
		dir := filepath.Join(root, filepath.FromSlash(m.Dir))
		gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err != nil {
			return err
		}
		gosum, _ := os.ReadFile(filepath.Join(dir, "go.sum"))
		alt := filepath.Join(tmp, fmt.Sprintf("m%d.mod", i))
		altSum := strings.TrimSuffix(alt, ".mod") + ".sum"
		if err := os.WriteFile(alt, gomod, 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(altSum, withoutOurs(gosum), 0o644); err != nil {
			return err
		}
		tidy := exec.CommandContext(ctx, "go", "mod", "tidy", "-modfile="+alt)
		tidy.Dir, tidy.Env = dir, env
		if out, err := tidy.CombinedOutput(); err != nil {
			return fmt.Errorf("go mod tidy in %s: %v\n%s", m.Dir, err, out)
		}
		newMod, _ := os.ReadFile(alt)
		newSum, _ := os.ReadFile(altSum)
		if !bytes.Equal(newMod, gomod) || !bytes.Equal(withoutOurs(newSum), withoutOurs(gosum)) {
			untidy = append(untidy, m.Dir)
		}
	}
	if len(untidy) > 0 {
		return fmt.Errorf("not tidy: %s: run go mod tidy in each (GOWORK=off needs our modules at %s: see go run ./tools/release proxy)", strings.Join(untidy, ", "), version)
	}
	return nil
}

// withoutOurs is go.sum text without the lines of our own modules.
func withoutOurs(sum []byte) []byte {
	var out []byte
	for line := range bytes.Lines(sum) {
		if !bytes.HasPrefix(line, []byte(modulePrefix)) {
			out = append(out, line...)
		}
	}
	return out
}
