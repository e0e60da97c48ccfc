package hashchain

import (
	"os"
	"testing"
)

// TestAfterAndEach: After returns exactly the entries whose lines begin at or after an offset
// (a line start, or the middle of a line); Each returns every entry in order.
func TestAfterAndEach(t *testing.T) {
	tc := newTestChain(t)
	c := tc.open(t)
	want := fill(t, c, 5)
	b, err := os.ReadFile(tc.path)
	if err != nil {
		t.Fatal(err)
	}
	var starts []int64 // where each line begins
	for i, off := 0, int64(0); i < len(want); i++ {
		starts = append(starts, off)
		for b[off] != '\n' {
			off++
		}
		off++
	}
	for _, tt := range []struct {
		offset int64
		first  int64 // seq of the first entry returned; 5 for none
	}{
		{0, 0}, {starts[2], 2}, {starts[2] + 1, 3}, {starts[2] - 1, 2}, {starts[4] + 3, 5}, {int64(len(b)), 5}, {int64(len(b)) + 10, 5},
	} {
		got, err := c.After(tt.offset)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(got)) != 5-tt.first || (len(got) > 0 && (got[0].Seq != tt.first || got[0].Hash != want[tt.first].Hash)) {
			t.Fatalf("After(%d): %d entries from seq %v, want from %d", tt.offset, len(got), got, tt.first)
		}
	}
	var seqs []int64
	if err := c.Each(func(e Entry) error { seqs = append(seqs, e.Seq); return nil }); err != nil || len(seqs) != 5 || seqs[4] != 4 {
		t.Fatalf("Each: %v %v", seqs, err)
	}
}
