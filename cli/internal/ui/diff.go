package ui

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"slices"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/agent-rewind/rewind/snapshot"
)

// Limits that keep a huge change from freezing the tab: past them the page shows a note.
const (
	maxChanges   = 5000    // paths listed in one diff
	maxFileBytes = 1 << 20 // a side larger than this is not line-diffed
	maxDiffD     = 1500    // changed lines beyond which a line diff is not computed
	maxShown     = 4000    // lines of hunks sent for one file
	contextLines = 3
)

// DiffView is the answer of api/diff: the changes between a and b (b "" is the live workspace).
type DiffView struct {
	From      string            `json:"from"`
	To        string            `json:"to"` // "" for the live workspace
	Changes   []snapshot.Change `json:"changes"`
	Total     int               `json:"total"`     // changes before truncation
	Truncated bool              `json:"truncated"` // only the first maxChanges are listed
	Warnings  []string          `json:"warnings,omitempty"`
}

func (s *Server) diff(w http.ResponseWriter, r *http.Request) {
	a, err := param(r, "a", "the checkpoint to compare from")
	if err != nil {
		fail(w, err)
		return
	}
	b := r.URL.Query().Get("b")
	if b == "live" {
		b = ""
	}
	s.mu.Lock()
	d, err := s.store.Diff(r.Context(), a, b)
	s.mu.Unlock()
	if err != nil {
		fail(w, err)
		return
	}
	v := DiffView{From: d.From, To: d.To, Changes: d.Changes, Total: len(d.Changes), Warnings: d.Warnings}
	if len(v.Changes) > maxChanges {
		v.Changes, v.Truncated = v.Changes[:maxChanges], true
	}
	writeJSON(w, v)
}

// FileDiff is the answer of api/file: one path compared between two points.
type FileDiff struct {
	Path string          `json:"path"`
	From *snapshot.Entry `json:"from"` // nil where the path is absent
	To   *snapshot.Entry `json:"to"`
	// Show is what the page draws: "text" (Hunks), "binary", "symlink", "mode", "type", "dir",
	// "skipped", "large", "huge" (too many changed lines), "same".
	Show      string `json:"show"`
	Note      string `json:"note,omitempty"`
	Hunks     []Hunk `json:"hunks,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
}

func (s *Server) fileDiff(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p, err := param(r, "path", "the file to compare, relative to the workspace root")
	if err != nil {
		fail(w, err)
		return
	}
	a, err := param(r, "a", "the checkpoint to compare from")
	if err != nil {
		fail(w, err)
		return
	}
	if err := s.store.CheckPath(p); err != nil {
		fail(w, err)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	from, fromData, err := s.side(a, p)
	if err != nil {
		fail(w, err)
		return
	}
	b := q.Get("b")
	if b == "live" {
		b = ""
	}
	to, toData, err := s.side(b, p)
	if err != nil {
		fail(w, err)
		return
	}
	if from == nil && to == nil {
		fail(w, fmt.Errorf("%w: %q is neither in %s nor in %s (paths are relative to the workspace root)", snapshot.ErrNoSuchPath, p, pointName(a), pointName(b)))
		return
	}
	writeJSON(w, compareFile(p, from, to, fromData, toData))
}

// pointName names a side of a comparison: a checkpoint, or the live workspace ("").
func pointName(ref string) string {
	if ref == "" {
		return "the live workspace"
	}
	return "checkpoint " + ref
}

// compareFile decides how to show one path's change, and line-diffs text.
func compareFile(p string, from, to *snapshot.Entry, a, b []byte) FileDiff {
	fd := FileDiff{Path: p, From: from, To: to}
	switch {
	case from == nil && to == nil:
		fd.Show, fd.Note = "same", "absent on both sides"
		return fd
	case from != nil && to != nil && from.Type != to.Type:
		fd.Show, fd.Note = "type", fmt.Sprintf("a %s became a %s", from.Type, to.Type)
		return fd
	}
	e := to
	if e == nil {
		e = from
	}
	switch e.Type {
	case snapshot.TypeDir:
		fd.Show = "dir"
		return fd
	case snapshot.TypeSkipped:
		fd.Show, fd.Note = "skipped", "not captured: "+e.Reason
		return fd
	case snapshot.TypeSymlink:
		fd.Show = "symlink"
		return fd
	}
	if from != nil && to != nil && from.Blob == to.Blob {
		fd.Show = "mode"
		if from.Mode == to.Mode {
			fd.Show = "same"
		}
		return fd
	}
	if (from != nil && from.Size > maxFileBytes) || (to != nil && to.Size > maxFileBytes) {
		fd.Show, fd.Note = "large", fmt.Sprintf("larger than %d MiB: not compared line by line", maxFileBytes>>20)
		return fd
	}
	if !isText(a) || !isText(b) {
		fd.Show, fd.Note = "binary", "binary content"
		return fd
	}
	lines, ok := diffLines(splitLines(a), splitLines(b), maxDiffD)
	if !ok {
		fd.Show, fd.Note = "huge", fmt.Sprintf("more than %d lines differ: too many to show", maxDiffD)
		return fd
	}
	fd.Show = "text"
	fd.Hunks, fd.Truncated = hunks(lines, contextLines, maxShown)
	if fd.Hunks == nil {
		fd.Hunks = []Hunk{}
	}
	return fd
}

func isText(b []byte) bool {
	head := b[:min(len(b), 8000)]
	return bytes.IndexByte(head, 0) < 0 && utf8.Valid(b)
}

func splitLines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	ls := strings.SplitAfter(string(b), "\n")
	if ls[len(ls)-1] == "" {
		ls = ls[:len(ls)-1]
	}
	return ls
}

// side returns path p's entry at point ref (a checkpoint, or "" for the live workspace) and a
// regular file's content up to maxFileBytes; nil when the path is absent there.
func (s *Server) side(ref, p string) (*snapshot.Entry, []byte, error) {
	if ref == "" {
		return s.liveSide(p)
	}
	es, err := s.store.Entries(ref)
	if err != nil {
		return nil, nil, err
	}
	find := func(p string) (*snapshot.Entry, bool) {
		i, ok := slices.BinarySearchFunc(es, p, func(e snapshot.Entry, p string) int { return strings.Compare(e.Path, p) })
		if !ok {
			return nil, false
		}
		return &es[i], true
	}
	e, ok := find(p)
	if !ok {
		for d := range ancestors(p) {
			if a, ok := find(d); ok && a.Type != snapshot.TypeDir {
				return nil, nil, snapshot.ThroughError(p, d, a.Type, "checkpoint "+ref)
			}
		}
		return nil, nil, nil
	}
	if e.Type != snapshot.TypeFile || e.Size > maxFileBytes {
		return e, nil, nil
	}
	rc, err := s.store.OpenContent(e.Blob)
	if err != nil {
		return nil, nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	return e, b, err
}

// liveSide reads p in the workspace inside an os.Root, never following a symlink: a path that
// names the store or leaves the workspace is refused like a restore's.
func (s *Server) liveSide(p string) (*snapshot.Entry, []byte, error) {
	if err := s.store.CheckPath(p); err != nil {
		return nil, nil, err
	}
	root, err := os.OpenRoot(s.ws.Root)
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	// The root would follow a symlink that stays inside it (and refuse one that leaves it): a
	// path below a symlink is no path of the workspace, as a checkpoint records it.
	for d := range ancestors(p) {
		fi, err := root.Lstat(d)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil, nil, nil
		}
		if err != nil {
			return nil, nil, err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			return nil, nil, snapshot.ThroughError(p, d, snapshot.TypeSymlink, "the workspace")
		case fi.Mode().IsRegular():
			return nil, nil, snapshot.ThroughError(p, d, snapshot.TypeFile, "the workspace")
		case !fi.IsDir():
			return nil, nil, snapshot.ThroughError(p, d, snapshot.TypeSkipped, "the workspace")
		}
	}
	fi, err := root.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	e := &snapshot.Entry{Path: p, Mode: uint32(fi.Mode().Perm()), Size: fi.Size()}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		e.Type = snapshot.TypeSymlink
		e.Target, _ = root.Readlink(p)
		return e, nil, nil
	case fi.IsDir():
		e.Type, e.Size = snapshot.TypeDir, 0
		return e, nil, nil
	case !fi.Mode().IsRegular():
		e.Type, e.Reason = snapshot.TypeSkipped, "not a regular file"
		return e, nil, nil
	}
	e.Type = snapshot.TypeFile
	if fi.Size() > maxFileBytes {
		return e, nil, nil
	}
	f, err := root.OpenFile(p, readLiveFlags, 0)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return nil, nil, err
	}
	e.Size = int64(len(b))
	e.Blob = snapshot.Hash(sha256.Sum256(b))
	return e, b, nil
}

// ancestors yields the folders above the slash-separated path p, outermost first.
func ancestors(p string) func(yield func(string) bool) {
	return func(yield func(string) bool) {
		for i := 0; i < len(p); i++ {
			if p[i] == '/' && !yield(p[:i]) {
				return
			}
		}
	}
}
