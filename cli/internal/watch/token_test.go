package watch

import (
	"fmt"
	"testing"
)

// FuzzParseToken: any token a client sends parses or is refused, never panics, and a parsed one
// prints back to itself when it is canonical.
func FuzzParseToken(f *testing.F) {
	for _, s := range []string{"", "a:0", "ab12:18446744073709551615", ":1", "a:", "a:-1", "a:1:2", "a:01"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		id, n, ok := parseToken(tok)
		if !ok {
			return
		}
		if id == "" {
			t.Fatalf("%q parsed with an empty id", tok)
		}
		if again := fmt.Sprintf("%s:%d", id, n); again != tok {
			if id2, n2, ok2 := parseToken(again); !ok2 || id2 != id || n2 != n {
				t.Fatalf("%q -> %q does not parse back", tok, again)
			}
		}
	})
}
