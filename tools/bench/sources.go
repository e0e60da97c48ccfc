package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Source is one module's source files, each with its SHA-256, and the SHA-256 of the listing
// "<sha256>  <path>\n" of those files in path order (as sha256sum prints it), which changes
// exactly when one of them does.
type Source struct {
	Module string       `json:"module"` // folder relative to the repository root ("go.work" for the workspace files)
	SHA256 string       `json:"sha256"`
	Files  []SourceFile `json:"files"`
}

// SourceFile is one hashed source file; Path is relative to the repository root.
type SourceFile struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// findRoot walks up from dir to the directory holding go.work: the repository root.
func findRoot(dir string) (string, error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no go.work in %s or above it: run the bench from the agent-rewind repository (go run ./tools/bench)", dir)
		}
		d = parent
	}
}

// workModules returns the folders named by the use directives of root/go.work, cleaned and
// slash-separated ("cli", "hashchain", …).
func workModules(root string) ([]string, error) {
	f, err := os.Open(filepath.Join(root, "go.work"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseWorkUses(f)
}

// parseWorkUses returns the paths of a go.work file's use directives, single or in a block.
func parseWorkUses(r io.Reader) ([]string, error) {
	var mods []string
	inUse := false
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		fields := strings.Fields(line)
		switch {
		case len(fields) == 0:
		case inUse && fields[0] == ")":
			inUse = false
		case inUse:
			mods = append(mods, cleanModule(fields[0]))
		case fields[0] == "use" && len(fields) >= 2 && fields[1] == "(":
			inUse = true
		case fields[0] == "use" && len(fields) >= 2:
			mods = append(mods, cleanModule(fields[1]))
		}
	}
	return mods, sc.Err()
}

func cleanModule(p string) string { return path.Clean(strings.Trim(p, "\"`")) }

// hashModule hashes every .go file (outside testdata and hidden or underscore folders, which
// the go command ignores) and the go.mod and go.sum files of the module folder mod under root.
func hashModule(root, mod string) (Source, error) {
	src := Source{Module: mod}
	dir := filepath.Join(root, filepath.FromSlash(mod))
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != dir && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "node_modules") {
				return filepath.SkipDir
			}
			// A nested module is its own module, hashed when a suite names it.
			if p != dir {
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !d.Type().IsRegular() || !(strings.HasSuffix(name, ".go") || name == "go.mod" || name == "go.sum") {
			return nil
		}
		sum, _, err := fileSHA256(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		src.Files = append(src.Files, SourceFile{Path: filepath.ToSlash(rel), SHA256: sum})
		return nil
	})
	if err != nil {
		return src, fmt.Errorf("hash the sources of %s: %w", mod, err)
	}
	src.SHA256 = listingSHA256(src.Files)
	return src, nil
}

// hashWorkFiles hashes go.work and go.work.sum (where present) as the pseudo-module "go.work".
func hashWorkFiles(root string) (Source, error) {
	src := Source{Module: "go.work"}
	for _, name := range []string{"go.work", "go.work.sum"} {
		sum, _, err := fileSHA256(filepath.Join(root, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return src, err
		}
		src.Files = append(src.Files, SourceFile{Path: name, SHA256: sum})
	}
	src.SHA256 = listingSHA256(src.Files)
	return src, nil
}

func listingSHA256(files []SourceFile) string {
	slices.SortFunc(files, func(a, b SourceFile) int { return strings.Compare(a.Path, b.Path) })
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%s  %s\n", f.SHA256, f.Path)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// fileSHA256 returns the hex SHA-256 of the file at p and its size.
func fileSHA256(p string) (string, int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// Input is one corpus a suite read: a file under tools/bench/testdata/, or something generated,
// described by its generator's parameters and the hash of what was generated.
type Input struct {
	Name      string   `json:"name"`
	Kind      string   `json:"kind"`           // "file" or "generated"
	Path      string   `json:"path,omitempty"` // for a file: relative to the repository root
	Generator string   `json:"generator,omitempty"`
	Params    any      `json:"params,omitempty"`
	SHA256    string   `json:"sha256"` // a file's content, or the generator's listing hash
	Bytes     int64    `json:"bytes"`
	Suites    []string `json:"suites"`
}
