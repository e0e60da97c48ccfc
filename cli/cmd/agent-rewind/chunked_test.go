package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestCheckNamesFileOfDamagedChunk: a file over 4 MiB is stored in chunks (snapshot/FORMAT.md,
// "Chunked contents"). With one chunk removed from the store, check names the file, a rewind
// to the checkpoint that needs it is refused and changes nothing, and check --repair stores the
// content again from a workspace file that has it, after which the rewind works.
func TestCheckNamesFileOfDamagedChunk(t *testing.T) {
	ws := t.TempDir()
	big := make([]byte, 9<<20)
	r := rand.New(rand.NewPCG(1, 2))
	// Zeros find no cut point, so the first chunk is as large as a chunk may be (2 MiB) and
	// stored loose, where this test can remove it; random bytes after.
	for i := 3 << 20; i < len(big); i++ {
		big[i] = byte(r.Uint32())
	}
	name := filepath.Join(ws, "big.bin")
	if err := os.WriteFile(name, big, 0o644); err != nil {
		t.Fatal(err)
	}
	cp := jsonOK[cpOut](t, ws, "checkpoint", "first")
	sum := sha256.Sum256(big)
	list, err := os.ReadFile(filepath.Join(stateDir(t, ws), "chunklists", hex.EncodeToString(sum[:])))
	if err != nil {
		t.Fatalf("a 9 MiB file has no chunk list: %v", err)
	}
	// A chunk of over 1 MiB, which is stored loose (smaller ones are packed): the change below
	// replaces it.
	var chunk string
	var at int
	off := 0
	for _, line := range strings.Split(strings.TrimSpace(string(list)), "\n")[1:] {
		f := strings.Fields(line)
		size, _ := strconv.Atoi(f[1])
		if size > 1<<20 {
			chunk, at = f[0], off
			break
		}
		off += size
	}
	if chunk == "" {
		t.Fatalf("no chunk of big.bin is over 1 MiB:\n%s", list)
	}
	if err := os.Remove(filepath.Join(stateDir(t, ws), "objects", chunk[:2], chunk[2:])); err != nil {
		t.Fatal(err)
	}
	out := decode[checkOut](t, run(t, ws, "", "--json", "check"))
	var found []string
	for _, s := range out.Sections {
		for _, p := range s.Problems {
			found = append(found, p.Kind+" "+p.Path)
		}
	}
	if out.OK || !slices.Equal(found, []string{"chunk-missing big.bin"}) {
		t.Fatalf("check found %v, want chunk-missing naming big.bin", found)
	}
	changed := bytes.Clone(big)
	copy(changed[at:], "changed since")
	if err := os.WriteFile(name, changed, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := run(t, ws, "", "rewind", cp.ID); r.code != 1 || !strings.Contains(r.stderr, chunk[2:]) || !strings.Contains(r.stderr, "big.bin") {
		t.Fatalf("rewind to a checkpoint whose chunk is missing: exit %d, want 1 naming the chunk and the file\n%s%s", r.code, r.stdout, r.stderr)
	}
	if b, _ := os.ReadFile(name); !bytes.Equal(b, changed) {
		t.Fatal("the refused rewind changed big.bin")
	}
	if r := run(t, ws, "", "check"); r.code != 1 || !strings.Contains(r.stdout, "chunk-missing: ") || !strings.Contains(r.stdout, "big.bin") {
		t.Fatalf("check: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if err := os.WriteFile(filepath.Join(ws, "copy.bin"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	ok(t, ws, "check", "--repair")
	ok(t, ws, "check", "--read-data")
	os.Remove(filepath.Join(ws, "copy.bin"))
	ok(t, ws, "rewind", cp.ID)
	if b, _ := os.ReadFile(name); !bytes.Equal(b, big) {
		t.Fatal("rewind after repair: big.bin differs")
	}
}
