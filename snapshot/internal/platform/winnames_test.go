package platform

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestWindowsNameProblem(t *testing.T) {
	for name, bad := range map[string]bool{
		"README.md": false, "con.d": true, "icon": false, "CONSOLE": false, "COM10": false,
		"LPT0": false, "nul-ish": false, "a.b.c": false, ".hidden": false, "é": false, "COMx": false,
		"CON": true, "con": true, "Nul.txt": true, "aux.tar.gz": true, "PRN": true,
		"COM1": true, "com9.log": true, "LPT5": true, "lpt1.": true, "COM¹": true, "CONIN$": true,
		"NUL .txt": true, "name.": true, "name ": true, "a<b": true, "a>b": true, "a:b": true,
		`a"b`: true, "a|b": true, "a?b": true, "a*b": true, `a\b`: true, "a\x01b": true, "tab\t": true,
	} {
		why := WindowsNameProblem(name)
		if (why != "") != bad {
			t.Errorf("WindowsNameProblem(%q) = %q, want refused %v", name, why, bad)
		}
	}
}

func TestWindowsBadNames(t *testing.T) {
	// Sorted as a manifest is.
	paths := []string{
		"Makefile", "README", "SRC", "SRC/other.go", "build", "build/CON", "build/CON/x", "docs",
		"docs/a.", "makefile", "readme", "src", "src/Main.go", "src/main.go", "src/ok.go", "x",
	}
	got := WindowsBadNames(paths)
	want := map[string]string{
		"build/CON": "device name",
		"docs/a.":   "ends in a dot",
		"makefile":  "differs from Makefile only by case",
		"readme":    "differs from README only by case",
		"src":       "differs from SRC only by case",
	}
	if len(got) != len(want) {
		t.Fatalf("WindowsBadNames = %+v, want %d paths: %v", got, len(want), want)
	}
	for _, b := range got {
		if w, ok := want[b.Path]; !ok || !strings.Contains(b.Why, w) {
			t.Errorf("WindowsBadNames reports %s: %s; want %q", b.Path, b.Why, w)
		}
	}
	if got := WindowsBadNames([]string{"a", "a/b", "b"}); len(got) != 0 {
		t.Errorf("WindowsBadNames of good names = %+v", got)
	}
}

// FuzzWindowsNameProblem: any name is answered without a panic, and a name it accepts has none
// of what Windows refuses.
func FuzzWindowsNameProblem(f *testing.F) {
	for _, s := range []string{"CON", "nul.txt", "a.", "a ", "ok", "COM¹", "a:b", "\x00", "é.txt"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if WindowsNameProblem(name) != "" {
			return
		}
		if strings.ContainsAny(name, `<>:"|?*\`) || strings.HasSuffix(name, ".") || strings.HasSuffix(name, " ") {
			t.Fatalf("%q accepted", name)
		}
		for _, r := range name {
			if r < 0x20 {
				t.Fatalf("%q accepted with a control character", name)
			}
		}
		if utf8.ValidString(name) && isReservedDevice(name) {
			t.Fatalf("%q accepted though reserved", name)
		}
		// A manifest's path of that one element is accepted too.
		if name == "" || name == "." || name == ".." || strings.Contains(name, "/") {
			return
		}
		if bad := WindowsBadNames([]string{name}); len(bad) != 0 {
			t.Fatalf("WindowsBadNames([%q]) = %+v though the name is accepted", name, bad)
		}
	})
}
