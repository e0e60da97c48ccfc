package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
)

// modulePrefix is the path every module of this repository starts with.
const modulePrefix = "github.com/agent-rewind/rewind/"

// Module is one module of the workspace.
type Module struct {
	Path     string   // module path
	Dir      string   // folder, relative to the repository root, slash-separated
	Siblings []string // paths of the sibling modules its go.mod requires
}

// TagName is the module's release tag for version: its folder, a slash and the version.
func (m Module) TagName(version string) string { return m.Dir + "/" + version }

// LoadModules reads the modules go.work lists and returns them in dependency order: every
// module after the siblings it requires, ties broken by path, so tags are made deps-first.
func LoadModules(root string) ([]Module, error) {
	b, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		return nil, err
	}
	wf, err := modfile.ParseWork("go.work", b, nil)
	if err != nil {
		return nil, err
	}
	byPath := map[string]Module{}
	for _, u := range wf.Use {
		dir := strings.TrimPrefix(filepath.ToSlash(filepath.Clean(u.Path)), "./")
		mf, err := readModFile(root, dir)
		if err != nil {
			return nil, err
		}
		if want := modulePrefix + dir; mf.Module.Mod.Path != want {
			return nil, fmt.Errorf("%s/go.mod declares module %s; a module in folder %s must be %s so its tag %s/vX.Y.Z resolves", dir, mf.Module.Mod.Path, dir, want, dir)
		}
		m := Module{Path: mf.Module.Mod.Path, Dir: dir}
		for _, r := range mf.Require {
			if strings.HasPrefix(r.Mod.Path, modulePrefix) {
				m.Siblings = append(m.Siblings, r.Mod.Path)
			}
		}
		byPath[m.Path] = m
	}
	var order []Module
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(p string, from string) error
	visit = func(p, from string) error {
		m, ok := byPath[p]
		if !ok {
			return fmt.Errorf("%s requires %s, which go.work does not list: add its folder to go.work", from, p)
		}
		switch state[p] {
		case 1:
			return fmt.Errorf("modules require each other in a cycle through %s", p)
		case 2:
			return nil
		}
		state[p] = 1
		for _, s := range m.Siblings {
			if err := visit(s, p); err != nil {
				return err
			}
		}
		state[p] = 2
		order = append(order, m)
		return nil
	}
	paths := make([]string, 0, len(byPath))
	for p := range byPath {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		if err := visit(p, "go.work"); err != nil {
			return nil, err
		}
	}
	return order, nil
}

func readModFile(root, dir string) (*modfile.File, error) {
	name := filepath.Join(root, filepath.FromSlash(dir), "go.mod")
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return modfile.Parse(name, b, nil)
}

// SetSiblingVersions makes the go.mod in dir require every sibling at version and drops any
// replace directive of a sibling: go.work, not go.mod, is what points development at local copies.
func SetSiblingVersions(root, dir, version string) error {
	mf, err := readModFile(root, dir)
	if err != nil {
		return err
	}
	for _, r := range mf.Require {
		if strings.HasPrefix(r.Mod.Path, modulePrefix) {
			if err := mf.AddRequire(r.Mod.Path, version); err != nil {
				return err
			}
		}
	}
	for _, r := range slices.Clone(mf.Replace) {
		if strings.HasPrefix(r.Old.Path, modulePrefix) {
			if err := mf.DropReplace(r.Old.Path, r.Old.Version); err != nil {
				return err
			}
		}
	}
	mf.Cleanup()
	b, err := mf.Format()
	if err != nil {
		return err
	}
	return writeFile(filepath.Join(root, filepath.FromSlash(dir), "go.mod"), b, 0o644)
}

// SetWorkReplaces points go.work's replace directives of the modules at version to their
// folders. A workspace still reads the go.mod of every version its modules require, so until
// that version is published, go.work must say where it is; the directives are go.work's, never
// a go.mod's, so consumers never see them.
func SetWorkReplaces(root string, mods []Module, version string) error {
	name := filepath.Join(root, "go.work")
	b, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	wf, err := modfile.ParseWork(name, b, nil)
	if err != nil {
		return err
	}
	for _, r := range slices.Clone(wf.Replace) {
		if strings.HasPrefix(r.Old.Path, modulePrefix) {
			if err := wf.DropReplace(r.Old.Path, r.Old.Version); err != nil {
				return err
			}
		}
	}
	for _, m := range mods {
		if err := wf.AddReplace(m.Path, version, "./"+m.Dir, ""); err != nil {
			return err
		}
	}
	wf.Cleanup()
	return writeFile(name, modfile.Format(wf.Syntax), 0o644)
}
