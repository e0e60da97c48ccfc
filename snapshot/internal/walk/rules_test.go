package walk

import "testing"

// TestRules: a path is matched or excluded when any of the rules does so, a nil one excluding
// nothing.
func TestRules(t *testing.T) {
	r := Rules{nil, ParseIgnore([]byte("*.log\n")), ParseIgnore([]byte("build/\n"))}
	for _, tc := range []struct {
		path       string
		dir        bool
		match, exc bool
	}{
		{"a.log", false, true, true},
		{"build", true, true, true},
		{"build/x.go", false, false, true}, // excluded through its folder, not matched itself
		{"src/a.go", false, false, false},
	} {
		if got := r.Match(tc.path, tc.dir); got != tc.match {
			t.Errorf("Match(%q) = %v, want %v", tc.path, got, tc.match)
		}
		if got := r.Excluded(tc.path, tc.dir); got != tc.exc {
			t.Errorf("Excluded(%q) = %v, want %v", tc.path, got, tc.exc)
		}
	}
	if (Rules{}).Match("a.log", false) || (Rules{nil}).Excluded("a.log", false) {
		t.Error("empty rules exclude something")
	}
}
