package ui

import (
	"strings"
	"testing"
)

// apply rebuilds both sides from a diff: the old side from ' ' and '-', the new from ' ' and '+'.
func apply(ls []Line) (a, b []string) {
	for _, l := range ls {
		if l.Op != "+" {
			a = append(a, l.Text)
		}
		if l.Op != "-" {
			b = append(b, l.Text)
		}
	}
	return a, b
}

func TestDiffLinesRebuildsBothSides(t *testing.T) {
	cases := [][2]string{
		{"", ""}, {"a", ""}, {"", "a"}, {"a b c", "a b c"}, {"a b c", "a x c"},
		{"a b c d e f", "b c e f g"}, {"x x x", "x x"}, {"a b a b a", "b a b a b"},
		{"1 2 3 4 5 6 7 8 9 10 11 12", "1 2 3 X 5 6 7 8 9 10 Y 12"},
	}
	for _, c := range cases {
		a, b := strings.Fields(c[0]), strings.Fields(c[1])
		ls, ok := diffLines(a, b, 100)
		if !ok {
			t.Fatalf("%q -> %q: gave up", c[0], c[1])
		}
		ga, gb := apply(ls)
		if strings.Join(ga, " ") != c[0] || strings.Join(gb, " ") != c[1] {
			t.Fatalf("%q -> %q: rebuilt %q, %q", c[0], c[1], ga, gb)
		}
		changed := 0
		for _, l := range ls {
			if l.Op != " " {
				changed++
			}
			if (l.Op != "+" && (l.A < 1 || ga[l.A-1] != l.Text)) || (l.Op != "-" && (l.B < 1 || gb[l.B-1] != l.Text)) {
				t.Fatalf("%q -> %q: line numbers wrong in %+v", c[0], c[1], l)
			}
		}
		if c[0] == "a b c" && c[1] == "a x c" && changed != 2 {
			t.Fatalf("one line replaced: %d changed lines, want 2 (minimal)", changed)
		}
	}
}

func TestDiffLinesGivesUpBeyondMaxD(t *testing.T) {
	var a, b []string
	for i := 0; i < 500; i++ {
		a = append(a, "a"+string(rune('0'+i%10)))
		b = append(b, "b"+string(rune('0'+i%10)))
	}
	if _, ok := diffLines(a, b, 100); ok {
		t.Fatal("1000 differing lines with maxD 100: not given up")
	}
}

func TestHunksKeepContextAndTruncate(t *testing.T) {
	var a, b []string
	for i := 0; i < 100; i++ {
		s := string(rune('A'+i%26)) + string(rune('0'+i/26))
		a = append(a, s)
		if i == 10 || i == 80 {
			s += "!"
		}
		b = append(b, s)
	}
	ls, _ := diffLines(a, b, 100)
	hs, trunc := hunks(ls, 3, 1000)
	if trunc || len(hs) != 2 || len(hs[0].Lines) != 8 || hs[0].Lines[0].A != 8 {
		t.Fatalf("hunks %+v truncated %v", hs, trunc)
	}
	hs, trunc = hunks(ls, 3, 5)
	if !trunc || len(hs) != 1 || len(hs[0].Lines) != 5 {
		t.Fatalf("truncated hunks %+v %v", hs, trunc)
	}
}
