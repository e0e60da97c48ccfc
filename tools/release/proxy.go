package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

// AddToProxy writes module m at version into a file-based module proxy under proxyDir (the
// layout GOPROXY=file://proxyDir reads: @v/list, .info, .mod and .zip), taking the files git
// tracks in m's folder of the checkout at root, as a tag of that commit would publish them.
func AddToProxy(ctx context.Context, root, proxyDir string, m Module, version string) error {
	mv := module.Version{Path: m.Path, Version: version}
	esc, err := module.EscapePath(m.Path)
	if err != nil {
		return err
	}
	dir := filepath.Join(proxyDir, filepath.FromSlash(esc), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files, err := trackedFiles(ctx, root, m.Dir)
	if err != nil {
		return err
	}
	var zbuf bytes.Buffer
	if err := zip.Create(&zbuf, mv, files); err != nil {
		return fmt.Errorf("zip of %s: %w", mv, err)
	}
	gomod, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(m.Dir), "go.mod"))
	if err != nil {
		return err
	}
	info := fmt.Sprintf("{\"Version\":%q,\"Time\":\"2026-01-01T00:00:00Z\"}\n", version)
	for name, data := range map[string][]byte{version + ".zip": zbuf.Bytes(), version + ".mod": gomod, version + ".info": []byte(info)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	list, _ := os.ReadFile(filepath.Join(dir, "list"))
	if !strings.Contains("\n"+string(list), "\n"+version+"\n") {
		list = append(list, version+"\n"...)
	}
	return os.WriteFile(filepath.Join(dir, "list"), list, 0o644)
}

// trackedFiles lists the files git tracks under dir (nested modules and vendor folders are
// left out by zip.Create itself), so ignored files such as node_modules never reach a zip.
func trackedFiles(ctx context.Context, root, dir string) ([]zip.File, error) {
	out, err := exec.CommandContext(ctx, "git", "-C", root, "ls-files", "-z", "--", dir).Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files %s in %s: %v", dir, root, err)
	}
	var files []zip.File
	for _, rel := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if rel == "" {
			continue
		}
		abs := filepath.Join(root, filepath.FromSlash(rel))
		if _, err := os.Lstat(abs); os.IsNotExist(err) {
			continue // deleted in the work tree
		}
		files = append(files, diskFile{path: strings.TrimPrefix(rel, dir+"/"), abs: abs})
	}
	return files, nil
}

// diskFile is a file of the checkout as zip.Create wants it.
type diskFile struct{ path, abs string }

func (f diskFile) Path() string                 { return f.path }
func (f diskFile) Lstat() (os.FileInfo, error)  { return os.Lstat(f.abs) }
func (f diskFile) Open() (io.ReadCloser, error) { return os.Open(f.abs) }
