package command

import (
	"testing"
	"time"
)

func TestUnits(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.00 KiB", 1536: "1.50 KiB", 10 << 20: "10.0 MiB", 1400 << 20: "1.37 GiB"} {
		if got := byteSize(n); got != want {
			t.Errorf("byteSize(%d) = %q, want %q", n, got, want)
		}
	}
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 50000: "50,000", 1234567: "1,234,567", -1234: "-1,234"} {
		if got := count(n); got != want {
			t.Errorf("count(%d) = %q, want %q", n, got, want)
		}
	}
	if plural(1, "file", "files") != "1 file" || plural(2000, "file", "files") != "2,000 files" {
		t.Error("plural")
	}
	for s, want := range map[string]string{"a/b.go": "a/b.go", "ünïcode": "ünïcode", "evil\x1b[2J": `"evil\x1b[2J"`, "new\nline": `"new\nline"`, "bad\xff": `"bad\xff"`} {
		if got := printable(s); got != want {
			t.Errorf("printable(%q) = %q, want %q", s, got, want)
		}
	}
}

func TestAgeFlag(t *testing.T) {
	for in, want := range map[string]time.Duration{"7d": 7 * 24 * time.Hour, "2w": 14 * 24 * time.Hour, "36h": 36 * time.Hour, "90m": 90 * time.Minute} {
		var a ageFlag
		if err := a.UnmarshalText([]byte(in)); err != nil || time.Duration(a) != want {
			t.Errorf("%q: %v, %v; want %v", in, time.Duration(a), err, want)
		}
	}
	for _, in := range []string{"", "d", "-1h", "1.5d", "seven days", "-3d"} {
		var a ageFlag
		if err := a.UnmarshalText([]byte(in)); err == nil {
			t.Errorf("%q accepted as %v", in, time.Duration(a))
		}
	}
}
