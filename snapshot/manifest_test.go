package snapshot

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/snapshot/internal/manifest"
)

const blobA = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"

func TestManifestRoundTrip(t *testing.T) {
	h, _ := ParseHash(blobA)
	in := []Entry{
		{Path: "a", Type: TypeDir, Mode: 0o755},
		{Path: "a/b.txt", Type: TypeFile, Mode: 0o644, Size: 5, Blob: h},
		{Path: "a/run", Type: TypeFile, Mode: 0o4755, Size: 5, Blob: h},
		{Path: "fifo", Type: TypeSkipped, Reason: "fifo"},
		{Path: "link", Type: TypeSymlink, Mode: 0o777, Size: 7, Target: "a/b.txt"},
		{Path: "name with\nnewline and spaces", Type: TypeFile, Mode: 0o600, Size: 5, Blob: h},
	}
	b := EncodeManifest(in)
	out, err := ParseManifest(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(in) {
		t.Fatalf("got %d entries", len(out))
	}
	for i := range in {
		if in[i] != out[i] {
			t.Fatalf("entry %d: got %+v, want %+v", i, out[i], in[i])
		}
	}
	if !bytes.Equal(EncodeManifest(out), b) {
		t.Fatal("encoding is not canonical")
	}
}

// tamperCases are manifests a restore must refuse before touching anything.
var tamperCases = []struct {
	name, manifest, reason string
}{
	{"dotdot", "rewind-manifest 1 1\nf 0644 5 " + blobA + " ../escape\x00\x00", `".."`},
	{"dotdot inside", "rewind-manifest 1 2\nd 0755 0 - a\x00\x00f 0644 5 " + blobA + " a/../../x\x00\x00", `".."`},
	{"absolute", "rewind-manifest 1 1\nf 0644 5 " + blobA + " /etc/passwd\x00\x00", "absolute"},
	{"dot", "rewind-manifest 1 1\nd 0755 0 - .\x00\x00", `"."`},
	{"empty path", "rewind-manifest 1 1\nd 0755 0 - \x00\x00", "empty path"},
	{"double slash", "rewind-manifest 1 2\nd 0755 0 - a\x00\x00f 0644 5 " + blobA + " a//b\x00\x00", "empty path segment"},
	{"trailing slash", "rewind-manifest 1 1\nd 0755 0 - a/\x00\x00", "empty path segment"},
	{"duplicate", "rewind-manifest 1 2\nf 0644 5 " + blobA + " a\x00\x00f 0644 5 " + blobA + " a\x00\x00", "duplicate"},
	{"unsorted", "rewind-manifest 1 2\nf 0644 5 " + blobA + " b\x00\x00f 0644 5 " + blobA + " a\x00\x00", "not sorted"},
	{"symlink swap", "rewind-manifest 1 2\nl 0777 4 - a\x00/etc\x00f 0644 5 " + blobA + " a/passwd\x00\x00", "parent"},
	{"under a file", "rewind-manifest 1 2\nf 0644 5 " + blobA + " a\x00\x00f 0644 5 " + blobA + " a/b\x00\x00", "parent"},
	{"missing parent", "rewind-manifest 1 1\nf 0644 5 " + blobA + " a/b\x00\x00", "parent"},
	{"count too high", "rewind-manifest 1 2\nf 0644 5 " + blobA + " a\x00\x00", "truncated"},
	{"count absurd", "rewind-manifest 1 999999999\n", "count"},
	{"trailing bytes", "rewind-manifest 1 1\nf 0644 5 " + blobA + " a\x00\x00junk", "after the last entry"},
	{"bad magic", "rewind-manifest 2 0\n", "header"},
	{"leading zero count", "rewind-manifest 1 01\nd 0755 0 - a\x00\x00", "canonical"},
	{"unknown type", "rewind-manifest 1 1\nq 0644 5 " + blobA + " a\x00\x00", "unknown type"},
	{"bad mode", "rewind-manifest 1 1\nf 0948 5 " + blobA + " a\x00\x00", "octal"},
	{"short blob", "rewind-manifest 1 1\nf 0644 5 abcd a\x00\x00", "blob"},
	{"upper-case blob", "rewind-manifest 1 1\nf 0644 5 " + strings.ToUpper(blobA) + " a\x00\x00", "blob"},
	{"blob on a dir", "rewind-manifest 1 1\nd 0755 0 " + blobA + " a\x00\x00", "no blob"},
	{"empty link", "rewind-manifest 1 1\nl 0777 0 - a\x00\x00", "target"},
	{"link size", "rewind-manifest 1 1\nl 0777 9 - a\x00b\x00", "size"},
	{"NUL missing", "rewind-manifest 1 1\nf 0644 5 " + blobA + " a", "NUL"},
	{"negative size", "rewind-manifest 1 1\nf 0644 -5 " + blobA + " a\x00\x00", "canonical"},
}

func TestManifestRefused(t *testing.T) {
	for _, tc := range tamperCases {
		_, err := ParseManifest([]byte(tc.manifest))
		if !errors.Is(err, ErrBadManifest) || !strings.Contains(err.Error(), tc.reason) {
			t.Errorf("%s: err = %v, want ErrBadManifest mentioning %q", tc.name, err, tc.reason)
		}
	}
}

// TestTamperedManifestTouchesNothing plants each refused manifest as a real checkpoint (with
// correct names, as an attacker with write access to the store could) and rewinds to it.
func TestTamperedManifestTouchesNothing(t *testing.T) {
	root := t.TempDir()
	baseTree(t, root)
	s := mustOpen(t, root, Options{})
	if _, err := s.Checkpoint(ctx, "real"); err != nil {
		t.Fatal(err)
	}
	before := readState(t, root)
	cases := append(tamperCases[:len(tamperCases):len(tamperCases)], struct{ name, manifest, reason string }{
		"state dir", "rewind-manifest 1 2\nd 0700 0 - .rewind\x00\x00f 0644 5 " + blobA + " .rewind/position\x00\x00", "state directory",
	})
	for _, tc := range cases {
		id := plant(t, s, []byte(tc.manifest))
		_, err := s.Rewind(ctx, id, RestoreOptions{})
		if !errors.Is(err, ErrBadManifest) || !strings.Contains(err.Error(), tc.reason) {
			t.Errorf("%s: rewind err = %v, want ErrBadManifest mentioning %q", tc.name, err, tc.reason)
		}
		if d := diffStates(before, readState(t, root)); d != "" {
			t.Fatalf("%s: a refused rewind changed the workspace:\n%s", tc.name, d)
		}
	}
	// A manifest whose bytes do not match its name is corrupt, whatever it says.
	id := plant(t, s, []byte("rewind-manifest 1 0\n"))
	c, _ := s.Get(id)
	os.WriteFile(filepath.Join(s.StateDir(), "manifests", c.Manifest.String()), []byte("rewind-manifest 1 0\n\n"), 0o600)
	if _, err := s.Rewind(ctx, id, RestoreOptions{}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("manifest not matching its name: %v", err)
	}
}

// plant stores manifest bytes and a checkpoint pointing at them, named correctly.
func plant(t *testing.T, s *Store, manifest []byte) string {
	t.Helper()
	h := Hash(sha256.Sum256(manifest))
	if err := os.WriteFile(filepath.Join(s.StateDir(), "manifests", h.String()), manifest, 0o600); err != nil {
		t.Fatal(err)
	}
	b, id := encodeCheckpoint(&Checkpoint{Kind: KindNormal, Label: "planted", Manifest: h})
	if err := os.WriteFile(filepath.Join(s.StateDir(), "checkpoints", id), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestLiveSymlinkNotFollowed: the live workspace has a symlink where the target checkpoint has a
// directory. The restore must replace the link, never write through it into the outside folder.
func TestLiveSymlinkNotFollowed(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	put(t, outside, "victim.txt", "precious", 0o644)
	put(t, root, "a/file.txt", "inside", 0o644)
	put(t, root, "a/sub/deep.txt", "deep", 0o644)
	s := mustOpen(t, root, Options{})
	cp, err := s.Checkpoint(ctx, "dir")
	if err != nil {
		t.Fatal(err)
	}
	want := readState(t, root)
	os.RemoveAll(filepath.Join(root, "a"))
	symlink(t, outside, filepath.Join(root, "a"))
	outsideBefore := readState(t, outside)
	if _, err := s.Rewind(ctx, cp.ID, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if d := diffStates(want, readState(t, root)); d != "" {
		t.Fatalf("workspace after rewind:\n%s", d)
	}
	if d := diffStates(outsideBefore, readState(t, outside)); d != "" {
		t.Fatalf("the folder behind the symlink was changed:\n%s", d)
	}
	// The safety checkpoint kept the link as a link.
	tl, _ := s.List()
	entries, err := s.Entries(tl.Checkpoints[1].ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Type != TypeSymlink || entries[0].Target != outside {
		t.Fatalf("safety manifest: %+v", entries)
	}
}

func FuzzParseManifest(f *testing.F) {
	h, _ := ParseHash(blobA)
	f.Add(EncodeManifest([]Entry{
		{Path: "a", Type: TypeDir, Mode: 0o755},
		{Path: "a/b", Type: TypeFile, Mode: 0o644, Size: 5, Blob: h},
		{Path: "l", Type: TypeSymlink, Mode: 0o777, Size: 1, Target: "a"},
		{Path: "s", Type: TypeSkipped, Reason: "socket"},
	}))
	for _, tc := range tamperCases {
		f.Add([]byte(tc.manifest))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := ParseManifest(data)
		if err != nil {
			return
		}
		// Whatever parses is safe and canonical.
		if !bytes.Equal(EncodeManifest(entries), data) {
			t.Fatalf("accepted a non-canonical manifest")
		}
		for _, e := range entries {
			if manifest.CheckPath(e.Path) != nil || strings.HasPrefix(e.Path, "/") || strings.Contains("/"+e.Path+"/", "/../") {
				t.Fatalf("accepted unsafe path %q", e.Path)
			}
		}
	})
}
