package snapshot

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
	"github.com/agent-rewind/rewind/snapshot/internal/objects"
)

// TestExecutableBitsAsRecorded: a checkpoint made elsewhere records 0755 for an executable (a
// file and a folder of 0755 entries, planted here as Linux would have written them). After a
// rewind to it, on Windows too, which keeps only the read-only attribute: the diff shows no
// change, the workspace is unchanged, a checkpoint records the same manifest, and once the
// executable's content changes the next checkpoint still records it 0755.
func TestExecutableBitsAsRecorded(t *testing.T) {
	root := t.TempDir()
	put(t, root, "README.md", "# hello\n", 0o644)
	put(t, root, "bin/run.sh", "#!/bin/sh\necho run\n", 0o644)
	put(t, root, "tools/gen", "#!/bin/sh\necho gen\n", 0o644)
	s := mustOpen(t, root, Options{})
	base, err := s.Checkpoint(ctx, "base")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := s.checkpointEntries(base.Checkpoint.ID)
	if err != nil {
		t.Fatal(err)
	}
	for i := range entries {
		switch entries[i].Path {
		case "bin/run.sh", "tools/gen", "tools":
			entries[i].Mode = 0o755
		}
	}
	made := plantTrees(t, s, entries)
	put(t, root, "README.md", "# changed\n", 0o644) // so that the rewind writes something
	if _, err := s.Rewind(ctx, made, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	d, err := s.Diff(ctx, made, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Changes) != 0 {
		t.Errorf("after the rewind, the diff with the checkpoint shows %+v, want no change", d.Changes)
	}
	if same, err := s.Unchanged(ctx, made); err != nil || !same {
		t.Errorf("after the rewind, Unchanged = %v, %v; want true", same, err)
	}
	again, err := s.Checkpoint(ctx, "again")
	if err != nil {
		t.Fatal(err)
	}
	want, err := s.readCheckpoint(made)
	if err != nil {
		t.Fatal(err)
	}
	if again.Checkpoint.Manifest != want.Manifest {
		t.Errorf("a checkpoint after the rewind has manifest %s, want the one rewound to, %s", again.Checkpoint.Manifest, want.Manifest)
	}
	if err := os.WriteFile(filepath.Join(root, "bin/run.sh"), []byte("#!/bin/sh\necho edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	edited, err := s.Checkpoint(ctx, "edited")
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.checkpointEntries(edited.Checkpoint.ID)
	if err != nil {
		t.Fatal(err)
	}
	want755(t, got, "after an edit")
	// The same through a hint of what changed, which edits the current manifest's trees
	// (treeedit.go) rather than capturing.
	if err := os.WriteFile(filepath.Join(root, "tools/gen"), []byte("#!/bin/sh\necho edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hinted, err := s.CheckpointChanged(ctx, "hinted", &Changed{Since: edited.Checkpoint.ID, Paths: []string{"tools/gen"}})
	if err != nil {
		t.Fatal(err)
	}
	if hinted.Walk.Mode != "changed" {
		t.Errorf("the hinted checkpoint walked %+v, want the hint's paths only", hinted.Walk)
	}
	if got, err = s.checkpointEntries(hinted.Checkpoint.ID); err != nil {
		t.Fatal(err)
	}
	want755(t, got, "after an edit named by a hint")
}

// want755 fails t unless the executables of TestExecutableBitsAsRecorded are 0755 in entries.
func want755(t *testing.T, entries []Entry, when string) {
	t.Helper()
	n := 0
	for _, e := range entries {
		switch e.Path {
		case "bin/run.sh", "tools/gen", "tools":
			n++
			if e.Mode != 0o755 {
				t.Errorf("the checkpoint %s records %s as %04o, want 0755 as recorded", when, e.Path, e.Mode)
			}
		}
	}
	if n != 3 {
		t.Errorf("the checkpoint %s lists %d of the 3 executables", when, n)
	}
}

// plantTrees stores entries as a manifest of trees, as a checkpoint writes it, and a checkpoint
// naming it.
func plantTrees(t *testing.T, s *Store, entries []Entry) string {
	t.Helper()
	tr := manifest.EncodeTrees(len(entries), func(i int) *Entry { return &entries[i] }, nil)
	stg := objects.NewStager(s.objects)
	for h, b := range tr.Nodes {
		if err := stg.PutBytes(h, b); err != nil {
			t.Fatal(err)
		}
	}
	if err := stg.Commit(); err != nil {
		t.Fatal(err)
	}
	return plant(t, s, tr.Root)
}
