package objects

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"testing"
	"testing/iotest"

	"github.com/agent-rewind/rewind/snapshot/internal/workspacetest"
)

// The helpers the module's tests share (a seed names the same bytes in the store's tests).
var (
	randomBytes = workspacetest.RandomBytes
	cpuTime     = workspacetest.CPUTime
)

// chunkAll cuts b as a stored file is cut and returns the chunks' lengths.
func chunkAll(t testing.TB, b []byte) []int {
	return chunkFrom(t, bytes.NewReader(b))
}

func chunkFrom(t testing.TB, r io.Reader) []int {
	t.Helper()
	c := newChunker(r, io.Discard, make([]byte, 2*MaxChunk))
	var sizes []int
	for {
		ch, err := c.next()
		if err == io.EOF {
			return sizes
		}
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(ch))
	}
}

// The gear table and the boundaries it gives are part of the format: a change to either makes
// every chunked file of every store share nothing with its next version. Pinned here.
func TestGearTablePinned(t *testing.T) {
	var b []byte
	for _, v := range gear {
		b = binary.BigEndian.AppendUint64(b, v)
	}
	if got, want := fmt.Sprintf("%x", sha256.Sum256(b)), gearDigest; got != want {
		t.Fatalf("gear table digest %s, want %s: chunk boundaries would differ from every stored chunk list", got, want)
	}
	// The rule that made the written-out table (gear.go).
	for i, v := range gear {
		s := sha256.Sum256(append([]byte("rewind-gear "), byte(i)))
		if want := binary.BigEndian.Uint64(s[:8]); v != want {
			t.Fatalf("gear[%d] = %#x, want %#x (the first 8 bytes of SHA-256(\"rewind-gear \" + byte %d))", i, v, want, i)
		}
	}
	// As FORMAT.md documents it: printf 'rewind-gear \x00' | sha256sum | cut -c1-16
	if gear[0] != 0xfd74ed3be012c893 || gear[255] != 0x8308b38285d2756d {
		t.Fatalf("gear[0] = %#x, gear[255] = %#x, want 0xfd74ed3be012c893 and 0x8308b38285d2756d", gear[0], gear[255])
	}
	sizes := chunkAll(t, randomBytes(8<<20, 1))
	if got := fmt.Sprint(sizes); got != pinnedSizes {
		t.Fatalf("chunk sizes of the pinned input: %s, want %s", got, pinnedSizes)
	}
}

const (
	gearDigest  = "65a6b042da25bcfbf6a1001bc2d6c146a4d7a84b2188c7f3b78b269cd3ea7896"
	pinnedSizes = "[555641 261389 551013 762052 556624 613926 555854 270816 548404 604372 567523 557839 672794 774040 536321]"
)

func TestChunkBounds(t *testing.T) {
	for _, n := range []int{0, 1, minChunk, minChunk + 1, MaxChunk, 3*MaxChunk + 5, 20 << 20} {
		b := randomBytes(n, uint64(n))
		sizes := chunkAll(t, b)
		total := 0
		for i, s := range sizes {
			total += s
			if s > MaxChunk || s < 1 || (s < minChunk && i != len(sizes)-1) {
				t.Errorf("n=%d: chunk %d is %d bytes, want %d to %d (only the last may be shorter)", n, i, s, minChunk, MaxChunk)
			}
		}
		if total != n {
			t.Errorf("n=%d: chunks add up to %d", n, total)
		}
	}
	// Boundaries depend on the content only, not on how reads split it.
	b := randomBytes(9<<20, 4)
	whole := fmt.Sprint(chunkAll(t, b))
	for _, r := range []io.Reader{iotest.HalfReader(bytes.NewReader(b)), iotest.DataErrReader(bytes.NewReader(b)), io.MultiReader(bytes.NewReader(b[:777]), bytes.NewReader(b[777:]))} {
		if got := fmt.Sprint(chunkFrom(t, r)); got != whole {
			t.Fatalf("read in other pieces: %s, want %s", got, whole)
		}
	}
	// All zeros: the same chunk again and again, so a sparse or zeroed file stores one.
	sizes := chunkAll(t, make([]byte, 16<<20))
	for _, s := range sizes[:len(sizes)-1] {
		if s != sizes[0] {
			t.Fatalf("zeros cut into different sizes: %v", sizes)
		}
	}
}

// Inserting bytes moves the boundaries near the insertion only: the chunks before it and all
// but a few after it are the same (shift resistance, what makes an edit cost a chunk or two).
func TestChunkShiftResistance(t *testing.T) {
	orig := randomBytes(32<<20, 3)
	for _, c := range []struct {
		name string
		edit func([]byte) []byte
	}{
		{"insert 100 bytes in the middle", func(b []byte) []byte {
			return append(append(append([]byte{}, b[:16<<20]...), randomBytes(100, 9)...), b[16<<20:]...)
		}},
		{"delete 1 byte near the start", func(b []byte) []byte {
			return append(append([]byte{}, b[:1000]...), b[1001:]...)
		}},
		{"insert 1 MiB at the start", func(b []byte) []byte { return append(randomBytes(1<<20, 10), b...) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b := chunkSet(t, orig), chunkSet(t, c.edit(orig))
			var newBytes int
			for h, n := range b {
				if _, ok := a[h]; !ok {
					newBytes += n
				}
			}
			// The edit plus at most two chunks around it (each at most MaxChunk).
			if newBytes > 1<<20+2*MaxChunk {
				t.Fatalf("%d bytes of new chunks after the edit, want at most %d", newBytes, 1<<20+2*MaxChunk)
			}
		})
	}
}

func chunkSet(t *testing.T, b []byte) map[Hash]int {
	t.Helper()
	out := map[Hash]int{}
	off := 0
	for _, n := range chunkAll(t, b) {
		out[Hash(sha256.Sum256(b[off:off+n]))] = n
		off += n
	}
	return out
}

// BenchmarkChunkHash compares what a large file's bytes cost when stored in chunks (the gear
// hash, the whole file's SHA-256 and each chunk's) with SHA-256 alone (a file stored whole), in
// MB/s of wall time and of CPU time (cpu-MB/s), which the load of other processes disturbs less.
func BenchmarkChunkHash(b *testing.B) {
	data := randomBytes(64<<20, 5)
	buf := make([]byte, 2*MaxChunk)
	run := func(name string, f func()) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			c0 := cpuTime()
			for b.Loop() {
				f()
			}
			b.ReportMetric(float64(len(data))*float64(b.N)/(cpuTime()-c0).Seconds()/1e6, "cpu-MB/s")
		})
	}
	run("sha256", func() { sha256.Sum256(data) })
	run("gear", func() {
		for off := 0; off < len(data); {
			off += cutPoint(data[off:])
		}
	})
	run("chunked", func() {
		whole := sha256.New()
		c := newChunker(bytes.NewReader(data), whole, buf)
		for {
			ch, err := c.next()
			if err != nil {
				break
			}
			sha256.Sum256(ch)
		}
		whole.Sum(nil)
	})
}
