package hashchain

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestJCSVectors checks the RFC 8785 examples in testdata/jcs.
func TestJCSVectors(t *testing.T) {
	inputs, _ := filepath.Glob("testdata/jcs/*.json")
	if len(inputs) < 6 {
		t.Fatalf("want the RFC 8785 vectors in testdata/jcs, found %d", len(inputs))
	}
	for _, in := range inputs {
		src, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(strings.TrimSuffix(in, ".json") + ".canon")
		if err != nil {
			t.Fatal(err)
		}
		got, err := CanonicalJSON(src)
		if err != nil || string(got) != string(want) {
			t.Errorf("%s:\n got %s (%v)\nwant %s", in, got, err, want)
		}
		// The canonical form is a fixed point, and the fast scanner accepts it as a value.
		again, err := CanonicalJSON(got)
		if err != nil || string(again) != string(got) {
			t.Errorf("%s: not idempotent: %s", in, again)
		}
		if end, ok := scanValue(got, 0, 1); !ok || end != len(got) {
			t.Errorf("%s: fast scanner rejects the canonical form", in)
		}
	}
}

// TestJCSNumbers checks RFC 8785 Appendix B: IEEE 754 bit patterns and their canonical text.
func TestJCSNumbers(t *testing.T) {
	f, err := os.Open("testdata/jcs/numbers.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		bitsHex, want, _ := strings.Cut(sc.Text(), ",")
		b, err := hex.DecodeString(bitsHex)
		if err != nil {
			t.Fatal(err)
		}
		v := math.Float64frombits(binary.BigEndian.Uint64(b))
		if got := string(formatNumber(nil, v)); got != want {
			t.Errorf("%s (%g): got %s, want %s", bitsHex, v, got, want)
		}
		n++
	}
	if n < 20 {
		t.Fatalf("only %d number vectors", n)
	}
	more := map[float64]string{1e21: "1e+21", 1e20: "100000000000000000000", 1.5e-7: "1.5e-7", 1e-6: "0.000001",
		123.45: "123.45", -1: "-1", 0.1: "0.1", 1e-7: "1e-7", 5e-7: "5e-7", 12e20: "1.2e+21"}
	for v, want := range more {
		if got := string(formatNumber(nil, v)); got != want {
			t.Errorf("%g: got %s, want %s", v, got, want)
		}
	}
}

func TestJCSRejects(t *testing.T) {
	for _, src := range []string{
		``, `{`, `{"a":1,"a":2}`, `"\ud800"`, `"\udc00\ud800"`, `1e400`, `-`, `01`, `1.`, `.5`, `NaN`,
		`[1,]`, `{"a" 1}`, "\"\x01\"", "\"\xff\"", `tru`, `{} x`, `"\x"`, `"\u12"`,
		strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1),
	} {
		if got, err := CanonicalJSON([]byte(src)); err == nil {
			t.Errorf("CanonicalJSON(%q) = %s, want an error", src, got)
		} else if !errors.Is(err, errJSON) {
			t.Errorf("CanonicalJSON(%q): error %v does not wrap errJSON", src, err)
		}
	}
	deep := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	if _, err := CanonicalJSON([]byte(deep)); err != nil {
		t.Errorf("depth %d: %v", MaxDepth, err)
	}
}

func TestCompareUTF16(t *testing.T) {
	// U+1F602 (a surrogate pair, 0xD83D…) sorts before U+FB33 in UTF-16, after it in UTF-8.
	ordered := []string{"", "\n", "1", "10", "A", "a", "\u0080", "\u00f6", "\u20ac", "\U0001F602", "\U0001F603", "\ufb33", "\uffff"}
	for i := range ordered {
		for j := range ordered {
			got := compareUTF16(ordered[i], ordered[j])
			if (i < j) != (got < 0) || (i == j) != (got == 0) {
				t.Errorf("compareUTF16(%q, %q) = %d", ordered[i], ordered[j], got)
			}
		}
	}
}

func TestExactIntegers(t *testing.T) {
	for lit, ok := range map[string]bool{"9007199254740992": true, "9007199254740993": false, "-9007199254740993": false,
		"1152921504606846976": true, "12345678901234567890": false, "0": true, "-0": true, "100000000000000000000000": false} {
		_, err := canonicalData(map[string]any{"n": jsonNumber(lit)})
		if (err == nil) != ok {
			t.Errorf("%s: err %v, want ok=%v", lit, err, ok)
		}
		if err != nil && !errors.Is(err, ErrBadData) {
			t.Errorf("%s: %v does not wrap ErrBadData", lit, err)
		}
	}
}
