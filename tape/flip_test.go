package tape

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
)

// flipTrials is how many single-byte corruptions TestFlippedBytes tries; TAPE_FLIP_TRIALS
// raises it for a long local run.
func flipTrials(t *testing.T) int {
	if v, err := strconv.Atoi(os.Getenv("TAPE_FLIP_TRIALS")); err == nil && v > 0 {
		return v
	}
	if testing.Short() {
		return 40
	}
	return 200
}

// TestFlippedBytes damages one byte of a closed tape database at a time and checks that every
// operation either gives the right answer or reports a typed error: never a panic, never a wrong
// response.
func TestFlippedBytes(t *testing.T) {
	const calls = 6
	src := t.TempDir()
	tp := openTest(t, src)
	r, _ := tp.Recorder("e1")
	for i := range calls {
		c := call(i)
		if i == 3 { // one call large enough for overflow pages
			c.Response.Body = bytes.Repeat(c.Response.Body, 400)
		}
		if _, err := r.Record(context.Background(), c); err != nil {
			t.Fatal(err)
		}
	}
	cur, _ := tp.Cursor("e1", "c")
	for i := range 2 {
		if _, err := cur.Next(context.Background(), fmt.Sprint("id-", i), req(i)); err != nil {
			t.Fatal(err)
		}
	}
	tp.Close()
	pristine, err := os.ReadFile(tp.Path())
	if err != nil {
		t.Fatal(err)
	}
	wantBody := func(i int) []byte {
		b := resp(i).Body
		if i == 3 {
			b = bytes.Repeat(b, 400)
		}
		return b
	}

	seed := rand.Uint64()
	if v, err := strconv.ParseUint(os.Getenv("TAPE_FLIP_SEED"), 10, 64); err == nil {
		seed = v // to reproduce a failure
	}
	rng := rand.New(rand.NewPCG(seed, 0))
	t.Logf("seed %d, database %d bytes", seed, len(pristine))
	outcomes := map[string]int{}
	// A strict miss is a reported outcome too: damage to the cursor_requests b-tree can hide a
	// served request id, and the retry then misses (the cursor does not move); Verify's
	// integrity_check reports such damage as ErrCorrupt.
	allowed := []error{ErrCorrupt, ErrTampered, ErrNewerFormat, ErrStorage, ErrEndOfTape, ErrStrictMiss}
	classify := func(trial int, off int, what string, err error) bool {
		for _, a := range allowed {
			if errors.Is(err, a) {
				outcomes[what+": "+a.Error()]++
				return true
			}
		}
		t.Fatalf("trial %d (seed %d, byte %d): %s: untyped or unexpected error: %v", trial, seed, off, what, err)
		return false
	}

	for trial := range flipTrials(t) {
		off := rng.IntN(len(pristine))
		if trial < 16 { // the header's fields (page size, versions, counts) get some attention
			off = rng.IntN(100)
		}
		data := bytes.Clone(pristine)
		data[off] ^= byte(1 + rng.IntN(255))
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "acme"), 0o700)
		if err := os.WriteFile(filepath.Join(dir, "acme", DatabaseName), data, 0o600); err != nil {
			t.Fatal(err)
		}

		tp, err := Open(context.Background(), Options{Dir: dir, Tenant: "acme", Key: testKey})
		if err != nil {
			classify(trial, off, "open", err)
			continue
		}
		if n, err := tp.Verify(context.Background(), "e1"); err != nil {
			classify(trial, off, "verify", err)
		} else if n != calls {
			outcomes[fmt.Sprintf("verify: %d calls (a truncation)", n)]++
		} else {
			outcomes["verify: ok"]++
		}
		cur, err := tp.Cursor("e1", "c")
		if err != nil {
			t.Fatalf("trial %d: Cursor: %v", trial, err)
		}
		// A retry of an id served before the damage, then the rest of the tape.
		steps := []int{0, 2, 3, 4, 5}
		for _, i := range steps {
			got, err := cur.Next(context.Background(), fmt.Sprint("id-", i), req(i))
			if err != nil {
				classify(trial, off, "replay", err)
				break
			}
			if got.Position != int64(i) || !bytes.Equal(got.Response.Body, wantBody(i)) || got.Response.Status != 200 {
				t.Fatalf("trial %d (seed %d, byte %d): call %d served a wrong answer: position %d, %d %.40q",
					trial, seed, off, i, got.Position, got.Response.Status, got.Response.Body)
			}
			if i == 5 {
				outcomes["replay: ok"]++
			}
		}
		tp.Close()
	}
	var keys []string
	for k := range outcomes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Logf("%4d  %s", outcomes[k], k)
	}
}
