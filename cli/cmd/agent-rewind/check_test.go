package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// "check" end to end: each kind of damage done to a real store by hand, found by the real binary;
// --repair fixes what it says, and a second check exits 0.

// checkOut is the --json shape of "check", as docs/check.md documents it.
type checkOut struct {
	OK, ReadData, Repair    bool
	Found, Repaired, Benign int
	Sections                []struct {
		Name     string
		Checked  int
		Problems []struct {
			Kind, Where, Path, What, Fix string
			Checkpoints                  []string
			Repaired, Benign             bool
		}
	}
}

// kinds lists the problems' kinds, section by section.
func (c checkOut) kinds() []string {
	var out []string
	for _, s := range c.Sections {
		for _, p := range s.Problems {
			out = append(out, p.Kind)
		}
	}
	return out
}

// checkWorkspace is a workspace of 12 files (11 small, f02.txt over 1 MiB) dated an hour ago (so the stat cache vouches
// for them at once) with one checkpoint, whose --json result it returns.
func checkWorkspace(t *testing.T) (string, cpOut) {
	t.Helper()
	ws := t.TempDir()
	old := time.Now().Add(-time.Hour)
	for i := range 12 {
		name := filepath.Join(ws, fmt.Sprintf("f%02d.txt", i))
		content := fmt.Appendf(nil, "content of file %d\n", i)
		if i == 2 {
			// Larger than what a checkpoint packs (1 MiB): a loose object the damage reaches.
			content = bytes.Repeat(content, 1<<20/len(content)+1)
		}
		if err := os.WriteFile(name, content, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(name, old, old); err != nil {
			t.Fatal(err)
		}
	}
	return ws, jsonOK[cpOut](t, ws, "checkpoint", "first")
}

// objectFile is where the store keeps the content of the workspace file rel (a loose object).
func objectFile(t *testing.T, ws, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ws, rel))
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(b)
	s := hex.EncodeToString(h[:])
	return filepath.Join(stateDir(t, ws), "objects", s[:2], s[2:])
}

// swapStatCacheBlobs swaps the blobs of two entries of the stat cache and recomputes its CRC
// (snapshot/FORMAT.md, "Index"): a cache that passes its checksum and lies about two files.
func swapStatCacheBlobs(t *testing.T, ws, a, b string) {
	t.Helper()
	name := filepath.Join(stateDir(t, ws), "index")
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if string(data[:8]) != "RWINDEX\x02" {
		t.Fatalf("stat cache magic %q", data[:8])
	}
	blobAt := map[string]int{}
	off := 8 + 32 + 4 // magic, rules, count
	for range binary.LittleEndian.Uint32(data[8+32:]) {
		n := int(binary.LittleEndian.Uint16(data[off:]))
		path := string(data[off+2 : off+2+n])
		off += 2 + n + 8*4 + 4 // path, size, mtime, ctime, inode, mode
		blobAt[path] = off
		off += 32
	}
	if off+4 != len(data) {
		t.Fatalf("stat cache: entries end at %d of %d bytes", off, len(data))
	}
	ia, ok1 := blobAt[a]
	ib, ok2 := blobAt[b]
	if !ok1 || !ok2 {
		t.Fatalf("stat cache lacks %s or %s", a, b)
	}
	ba := bytes.Clone(data[ia : ia+32])
	copy(data[ia:], data[ib:ib+32])
	copy(data[ib:], ba)
	binary.LittleEndian.PutUint32(data[off:], crc32.Checksum(data[:off], crc32.MakeTable(crc32.Castagnoli)))
	if err := os.WriteFile(name, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestCheckFindsEachDamage(t *testing.T) {
	for _, c := range []struct {
		name   string
		args   []string
		damage func(t *testing.T, ws string, cp cpOut)
		want   string
		repair bool // --repair fixes it: the workspace still has what was lost
	}{
		{"missing object", nil, func(t *testing.T, ws string, _ cpOut) {
			os.Remove(objectFile(t, ws, "f02.txt"))
		}, "object-missing", true},
		{"corrupt object", []string{"--read-data"}, func(t *testing.T, ws string, _ cpOut) {
			name := objectFile(t, ws, "f02.txt")
			b, _ := os.ReadFile(name)
			b[0] ^= 1
			os.WriteFile(name, b, 0o600)
		}, "object-corrupt", true},
		{"bad manifest", nil, func(t *testing.T, ws string, cp cpOut) {
			os.WriteFile(filepath.Join(stateDir(t, ws), "manifests", cp.Manifest), []byte("rewind-manifest 1 0\n"), 0o600)
		}, "manifest-corrupt", false},
		{"bad checkpoint file", nil, func(t *testing.T, ws string, cp cpOut) {
			name := filepath.Join(stateDir(t, ws), "checkpoints", cp.ID)
			b, _ := os.ReadFile(name)
			os.WriteFile(name, bytes.Replace(b, []byte(`"first"`), []byte(`"FIRST"`), 1), 0o600)
		}, "checkpoint-corrupt", false},
		{"stale stat cache entry", nil, func(t *testing.T, ws string, _ cpOut) {
			swapStatCacheBlobs(t, ws, "f03.txt", "f07.txt")
		}, "stat-cache-stale", true},
		{"broken chain", nil, func(t *testing.T, ws string, _ cpOut) {
			name := filepath.Join(stateDir(t, ws), "chain.jsonl")
			b, _ := os.ReadFile(name)
			os.WriteFile(name, bytes.Replace(b, []byte(`"label":"first"`), []byte(`"label":"firsT"`), 1), 0o600)
		}, "chain-broken", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ws, cp := checkWorkspace(t)
			c.damage(t, ws, cp)
			if c.args != nil { // the damage that needs the flag is invisible without it
				ok(t, ws, "check")
			}
			r := run(t, ws, "", append([]string{"--json", "check"}, c.args...)...)
			out := decode[checkOut](t, r)
			if r.code != 1 || out.OK || !slices.Contains(out.kinds(), c.want) {
				t.Fatalf("check --json: exit %d, ok %v, kinds %v; want exit 1 and %s\n%s", r.code, out.OK, out.kinds(), c.want, r.stdout)
			}
			r = run(t, ws, "", append([]string{"check"}, c.args...)...)
			if r.code != 1 || !strings.Contains(r.stdout, c.want+": ") || !strings.Contains(r.stdout, "to do: ") ||
				!strings.Contains(r.stdout, "the state does not agree with itself") {
				t.Fatalf("check: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			r = run(t, ws, "", append([]string{"check", "--repair"}, c.args...)...)
			if got := r.code == 0; got != c.repair {
				t.Fatalf("check --repair: exit %d, want repaired %v\n%s%s", r.code, c.repair, r.stdout, r.stderr)
			}
			if c.repair {
				ok(t, ws, append([]string{"check"}, c.args...)...)
			}
		})
	}
}

// TestCheckRepair: a lying stat cache and files left by interrupted writes are repaired; a
// second check exits 0, and the next checkpoint records true contents.
func TestCheckRepair(t *testing.T) {
	ws, first := checkWorkspace(t)
	out := jsonOK[checkOut](t, ws, "check")
	names := []string{}
	for _, s := range out.Sections {
		names = append(names, s.Name)
	}
	if want := []string{"checkpoints", "manifests", "packs", "objects", "position", "statCache", "leftovers", "chain", "record"}; !out.OK || out.Found != 0 || !slices.Equal(names, want) {
		t.Fatalf("check of a sound store: %+v, sections %v (want %v)", out, names, want)
	}
	if r := ok(t, ws, "check"); !strings.Contains(r.stdout, "ok: every part of the state agrees") {
		t.Fatalf("check text: %s", r.stdout)
	}

	state := stateDir(t, ws)
	staged := filepath.Join(state, "objects", "tmp", "obj-123")
	tmpMeta := filepath.Join(state, "checkpoints", ".tmp-0123456789ab-42")
	damage := func() {
		swapStatCacheBlobs(t, ws, "f03.txt", "f07.txt")
		for _, f := range []string{staged, tmpMeta} {
			if err := os.WriteFile(f, []byte("half"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	damage()
	r := run(t, ws, "", "--json", "check")
	if out := decode[checkOut](t, r); r.code != 1 || out.Found != 2 || out.Repaired != 0 || out.Benign != 2 {
		t.Fatalf("check before repair: exit %d, %+v", r.code, out)
	}
	if r := ok(t, ws, "check", "--repair"); !strings.Contains(r.stdout, "repaired all 2 problems found") || !strings.Contains(r.stdout, "harmless leftover: objects/tmp/obj-123") {
		t.Fatalf("check --repair: %s", r.stdout)
	}
	ok(t, ws, "check")
	ok(t, ws, "checkpoint") // rebuilds the stat cache, so it can be damaged again
	damage()
	out = jsonOK[checkOut](t, ws, "check", "--repair")
	if !out.OK || !out.Repair || out.Found != 2 || out.Repaired != 2 || out.Benign != 2 {
		t.Fatalf("check --repair --json: %+v", out)
	}
	for _, gone := range []string{staged, tmpMeta, filepath.Join(state, "index")} {
		if _, err := os.Lstat(gone); err == nil {
			t.Errorf("%s is still there after --repair", gone)
		}
	}
	if aside, _ := filepath.Glob(filepath.Join(state, "quarantine", "*", "objects", "tmp", "obj-123")); len(aside) != 2 {
		t.Errorf("the staged object was not moved aside to quarantine/ each time: %v", aside)
	}
	if r := ok(t, ws, "check"); !strings.Contains(r.stdout, "ok: every part of the state agrees") {
		t.Fatalf("check after repair: %s", r.stdout)
	}
	ok(t, ws, "checkpoint", "after repair")
	if d := jsonOK[diffOut](t, ws, "diff", first.ID); len(d.Changes) != 0 {
		t.Fatalf("diff after repair: %+v", d.Changes)
	}
}

// TestStatCacheSampleEndToEnd: the binary's checkpoints catch a lying stat cache within a few
// and say so; the catching checkpoint records the true contents (no change since the first).
func TestStatCacheSampleEndToEnd(t *testing.T) {
	ws, first := checkWorkspace(t)
	swapStatCacheBlobs(t, ws, "f03.txt", "f07.txt")
	type sampled struct {
		cpOut
		Verified int
		Warnings []string
	}
	for try := 1; ; try++ {
		if try > 30 {
			t.Fatal("30 checkpoints trusted a stat cache with two swapped blobs")
		}
		cp := jsonOK[sampled](t, ws, "checkpoint")
		if cp.Verified == 0 {
			t.Fatalf("checkpoint --json: verified 0: %+v", cp)
		}
		if len(cp.Warnings) == 0 {
			continue
		}
		if !strings.Contains(cp.Warnings[0], "stat cache vouched for content") || cp.Manifest != first.Manifest {
			t.Fatalf("the catching checkpoint: warnings %q, manifest %s (want the first's %s)", cp.Warnings, cp.Manifest, first.Manifest)
		}
		break
	}
	if cp := jsonOK[sampled](t, ws, "checkpoint"); len(cp.Warnings) != 0 || cp.Manifest != first.Manifest {
		t.Fatalf("the checkpoint after: warnings %q, manifest %s (want %s)", cp.Warnings, cp.Manifest, first.Manifest)
	}
	ok(t, ws, "check")
}

// TestCheckRecordSection: a gc is recorded before it removes checkpoints, so the record stays
// complete after it (check exits 0); a checkpoint removed by hand is reported by the record
// section, and "chain verify" lists the same gap.
func TestCheckRecordSection(t *testing.T) {
	ws, _ := checkWorkspace(t)
	if err := os.WriteFile(filepath.Join(ws, "more.txt"), []byte("more\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	second := jsonOK[cpOut](t, ws, "checkpoint", "second")
	if err := os.WriteFile(filepath.Join(ws, "more.txt"), []byte("more still\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	jsonOK[cpOut](t, ws, "checkpoint", "third")
	if r := run(t, ws, "", "gc", "--keep-last", "2"); r.code != 0 {
		t.Fatalf("gc: %d %s", r.code, r.stderr)
	}
	kinds := map[string]int{}
	for _, e := range readChain(t, ws) {
		kinds[e.Kind]++
	}
	if kinds["gc"] != 1 {
		t.Fatalf("chain kinds %v: want one gc entry", kinds)
	}
	if r := run(t, ws, "", "check"); r.code != 0 {
		t.Fatalf("check after gc: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if err := os.Remove(filepath.Join(stateDir(t, ws), "checkpoints", second.ID)); err != nil {
		t.Fatal(err)
	}
	r := run(t, ws, "", "--json", "check")
	var out checkOut
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || r.code != 1 {
		t.Fatalf("check: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	if !slices.Contains(out.kinds(), "record-missing-checkpoint") {
		t.Fatalf("check found %v, want record-missing-checkpoint", out.kinds())
	}
	if v := run(t, ws, "", "chain", "verify"); !strings.Contains(v.stdout, "gap: entry") || !strings.Contains(v.stdout, second.ID) {
		t.Fatalf("chain verify does not report the gap:\n%s%s", v.stdout, v.stderr)
	}
}

// TestPackIndexLost: the loss. The index file of the pack that holds a checkpoint's
// contents and trees is deleted: list and diff still read the checkpoint (through the copy of
// the index at the pack's end), check calls it harmless and exits 0, the next checkpoint
// writes the index file back (it never removes the pack), and the checkpoint rewinds exactly.
func TestPackIndexLost(t *testing.T) {
	ws, first := checkWorkspace(t)
	idx, _ := filepath.Glob(filepath.Join(stateDir(t, ws), "packs", "*.idx"))
	if len(idx) != 1 {
		t.Fatalf("pack indexes: %v", idx)
	}
	want, _ := os.ReadFile(idx[0])
	os.Remove(idx[0])
	writeFile(t, filepath.Join(ws, "f05.txt"), "changed\n")
	if d := jsonOK[diffOut](t, ws, "diff", first.ID); len(d.Changes) != 1 {
		t.Fatalf("diff with the pack's index file lost: %+v", d.Changes)
	}
	r := run(t, ws, "", "--json", "check")
	if out := decode[checkOut](t, r); r.code != 0 || !out.OK || out.Found != 0 || out.Benign != 1 {
		t.Fatalf("check with the pack's index file lost: exit %d, %+v", r.code, out)
	}
	if r := ok(t, ws, "check"); !strings.Contains(r.stdout, "harmless pack-index-missing") {
		t.Fatalf("check text: %s", r.stdout)
	}
	ok(t, ws, "checkpoint", "second")
	if got, err := os.ReadFile(idx[0]); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("the next checkpoint did not write the index back as it was: %v", err)
	}
	ok(t, ws, "rewind", first.ID)
	if got := readFile(t, filepath.Join(ws, "f05.txt")); got != "content of file 5\n" {
		t.Fatalf("after the rewind f05.txt holds %q", got)
	}
	if out := jsonOK[checkOut](t, ws, "check", "--read-data"); out.Found != 0 || out.Benign != 0 {
		t.Fatalf("check after: %+v", out)
	}
}
