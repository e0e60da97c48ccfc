package command

import (
	"context"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strings"

	"github.com/agent-rewind/rewind/snapshot"
)

// RestoreCmd restores chosen paths from a checkpoint, leaving the rest of the workspace and the
// position alone.
type RestoreCmd struct {
	ID     string   `arg:"" help:"The checkpoint to take the paths from: its id, or a unique prefix of at least 4 hex digits (see list)."`
	Paths  []string `arg:"" name:"path" help:"Files or folders to restore, relative to the folder named (--workspace, else the working directory), inside the workspace (a folder restores everything under it; a path the checkpoint lacks is deleted)."`
	DryRun bool     `help:"Print what the restore would change, and change nothing."`
}

// RestorePathsOutput is the --json shape of "restore": the module's result
// (snapshot.PathsResult: op "restore", opId, from (the position, unchanged), to (the checkpoint
// the paths came from), safety, safetyCreated, dryRun, changes, kept, chainSeq, elapsedMs,
// safetyCheckpoint, paths), the changes counted by kind, the command that undoes it, the store.
type RestorePathsOutput struct {
	*snapshot.PathsResult
	Counts ChangeCounts `json:"counts"`
	Undo   string       `json:"undo,omitempty"` // e.g. "agent-rewind restore 9abc0123def4 -- src/a.go"
	Store  string       `json:"store"`
	failure
}

// Run restores the paths.
func (c *RestoreCmd) Run(env *Env) error {
	s, err := openSnapshots(env, false)
	if err != nil {
		return err
	}
	defer s.close()
	// Paths are relative to the folder named, which is the workspace root itself unless a
	// subfolder stands for its repository (Env.choice): "app.js" run in web/ is web/app.js.
	base := env.chosen.Folder
	paths, err := workspacePaths(s.ws.Root, base, c.Paths)
	if err != nil {
		return err
	}
	res, err := s.store.RestorePaths(context.Background(), c.ID, paths, snapshot.RestoreOptions{DryRun: c.DryRun})
	s.done()
	if res == nil {
		return s.resolveError(err)
	}
	out := &RestorePathsOutput{PathsResult: res, Counts: countChanges(res.Changes), Store: s.ws.Meta}
	if !res.DryRun && len(res.Changes) > 0 {
		out.Undo = "agent-rewind restore " + res.Safety + " -- " + strings.Join(fromFolder(s.ws.Root, base, res.Paths), " ")
	}
	return emitResult(env, out, &out.failure, err, func(w io.Writer) error {
		writeRestorePaths(w, out)
		return nil
	})
}

// workspacePaths turns the paths given, relative to base (a folder at or inside root) or
// absolute, into the workspace-relative, slash-separated form a manifest uses: a path must lie
// inside the workspace root; "./a/" becomes "a". What remains unsafe (the store) the store
// refuses with the path named.
func workspacePaths(root, base string, in []string) ([]string, error) {
	var out []string
	for _, p := range in {
		if !filepath.IsAbs(p) && base != root {
			p = filepath.Join(base, p)
		}
		if filepath.IsAbs(p) {
			rel, err := filepath.Rel(root, filepath.Clean(p))
			if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return nil, fmt.Errorf("%w: %s is outside the workspace %s: give a path inside it", snapshot.ErrUnsafePath, p, root)
			}
			p = rel
		}
		p = filepath.ToSlash(p)
		if p != "" && !strings.HasPrefix(p, "../") && p != ".." {
			p = path.Clean(p)
		}
		if p == "." {
			return nil, fmt.Errorf("%w: %q is the whole workspace: to restore everything, use agent-rewind rewind", snapshot.ErrUnsafePath, p)
		}
		out = append(out, p)
	}
	return out, nil
}

// fromFolder returns paths (relative to root, slash-separated) as a command run in base names
// them: relative to base.
func fromFolder(root, base string, paths []string) []string {
	if base == root {
		return paths
	}
	out := make([]string, len(paths))
	for i, p := range paths {
		rel, err := filepath.Rel(base, filepath.Join(root, filepath.FromSlash(p)))
		if err != nil {
			rel = filepath.Join(root, filepath.FromSlash(p)) // absolute, which works from anywhere
		}
		out[i] = rel
	}
	return out
}

// writeRestorePaths prints a restore result.
func writeRestorePaths(w io.Writer, out *RestorePathsOutput) {
	res := out.PathsResult
	what := strings.Join(res.Paths, ", ")
	switch {
	case res.DryRun && len(res.Changes) == 0:
		fmt.Fprintf(w, "restore of %s from %s would change nothing: they equal it\n", what, res.To)
	case res.DryRun:
		fmt.Fprintf(w, "restore of %s from %s would change %s: %s\n", what, res.To, plural(len(res.Changes), "path", "paths"), out.Counts)
	case len(res.Changes) == 0:
		fmt.Fprintf(w, "restored %s from %s: they already equalled it, nothing changed\n", what, res.To)
	default:
		fmt.Fprintf(w, "restored %s from %s: %s\n", what, res.To, out.Counts)
	}
	writeChanges(w, res.Changes, shownChanges)
	for i, k := range res.Kept {
		if i == 0 {
			fmt.Fprintf(w, "left alone (%s):\n", plural(len(res.Kept), "path", "paths"))
		}
		fmt.Fprintf(w, "  %s: %s\n", printable(k.Path), k.Reason)
	}
	if res.DryRun {
		fmt.Fprintln(w, "dry run: nothing was changed")
		return
	}
	if res.From != "" {
		fmt.Fprintf(w, "the position stays %s; ", res.From)
	}
	if res.SafetyCreated {
		fmt.Fprintf(w, "safety checkpoint %s holds the state before\n", res.Safety)
	} else {
		fmt.Fprintf(w, "the state before is checkpoint %s\n", res.Safety)
	}
	if out.Undo != "" {
		fmt.Fprintf(w, "undo: %s\n", out.Undo)
	}
}
