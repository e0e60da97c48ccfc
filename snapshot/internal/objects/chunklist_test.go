package objects

import (
	"bytes"
	"strings"
	"testing"
)

func TestChunkListRoundTrip(t *testing.T) {
	chunks := []ChunkRef{{Hash{1}, MaxChunk}, {Hash{2}, 1}, {Hash{1}, 300}}
	b := EncodeChunkList(chunks)
	want := "rewind-chunks 1 3 2097453\n" +
		"0100000000000000000000000000000000000000000000000000000000000000 2097152\n" +
		"0200000000000000000000000000000000000000000000000000000000000000 1\n" +
		"0100000000000000000000000000000000000000000000000000000000000000 300\n"
	if string(b) != want {
		t.Fatalf("encoded:\n%s\nwant:\n%s", b, want)
	}
	got, size, err := ParseChunkList(b)
	if err != nil || size != 2097453 || len(got) != 3 || got[2] != chunks[2] {
		t.Fatalf("parse: %v %d %v", got, size, err)
	}
}

func TestChunkListRefused(t *testing.T) {
	h := strings.Repeat("ab", 32)
	for _, c := range []struct{ name, in string }{
		{"empty", ""},
		{"wrong magic", "rewind-chunk 1 1 5\n" + h + " 5\n"},
		{"newer version", "rewind-chunks 2 1 5\n" + h + " 5\n"},
		{"no chunks", "rewind-chunks 1 0 0\n"},
		{"count too high", "rewind-chunks 1 2 5\n" + h + " 5\n"},
		{"count too low", "rewind-chunks 1 1 10\n" + h + " 5\n" + h + " 5\n"},
		{"sizes disagree", "rewind-chunks 1 1 6\n" + h + " 5\n"},
		{"leading zero", "rewind-chunks 1 1 05\n" + h + " 5\n"},
		{"chunk of 0 bytes", "rewind-chunks 1 2 5\n" + h + " 5\n" + h + " 0\n"},
		{"chunk over MaxChunk", "rewind-chunks 1 1 2097153\n" + h + " 2097153\n"},
		{"upper-case hash", "rewind-chunks 1 1 5\n" + strings.ToUpper(h) + " 5\n"},
		{"short hash", "rewind-chunks 1 1 5\n" + h[2:] + " 5\n"},
		{"no final newline", "rewind-chunks 1 1 5\n" + h + " 5"},
		{"trailing bytes", "rewind-chunks 1 1 5\n" + h + " 5\n\n"},
		{"two spaces", "rewind-chunks 1 1 5\n" + h + "  5\n"},
		{"negative", "rewind-chunks 1 1 -5\n" + h + " -5\n"},
		{"huge count", "rewind-chunks 1 999999999999999999 5\n" + h + " 5\n"},
	} {
		if _, _, err := ParseChunkList([]byte(c.in)); err == nil {
			t.Errorf("%s: parsed %q", c.name, c.in)
		}
	}
}

// FuzzParseChunkList: the parser never panics, and what it accepts is canonical (encoding it
// again gives the same bytes) and obeys its rules.
func FuzzParseChunkList(f *testing.F) {
	f.Add(EncodeChunkList([]ChunkRef{{Hash{1}, 5}}))
	f.Add(EncodeChunkList([]ChunkRef{{Hash{1}, MaxChunk}, {Hash{9}, 7}, {Hash{1}, 300}}))
	f.Add([]byte("rewind-chunks 1 1 5\n"))
	f.Add([]byte("rewind-chunks 1 999999999999999999 5\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		chunks, size, err := ParseChunkList(b)
		if err != nil {
			return
		}
		if !bytes.Equal(EncodeChunkList(chunks), b) {
			t.Fatalf("accepted a non-canonical list %q", b)
		}
		var sum int64
		for _, c := range chunks {
			if c.Size < 1 || c.Size > MaxChunk {
				t.Fatalf("accepted a chunk of %d bytes", c.Size)
			}
			sum += c.Size
		}
		if len(chunks) == 0 || sum != size {
			t.Fatalf("accepted %d chunks adding up to %d, size %d", len(chunks), sum, size)
		}
	})
}
