package walk

import (
	"strings"
	"testing"
)

func TestShortPath(t *testing.T) {
	if p := "a/b/c"; ShortPath(p) != p {
		t.Fatalf("short path changed: %q", ShortPath(p))
	}
	long := strings.Repeat("é", 3000)
	got := ShortPath(long)
	if len(got) > 200 || !strings.Contains(got, "6000 in all") || !strings.HasPrefix(got, "é") || strings.ToValidUTF8(got, "?") != got {
		t.Fatalf("shortPath: %q", got)
	}
}
