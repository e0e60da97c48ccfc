package trust

import (
	"errors"
	"strings"
	"testing"
)

// mustRefuse fails unless err is a refusal whose message names path and contains each of want.
func mustRefuse(t *testing.T, err error, path string, want ...string) {
	t.Helper()
	var te *Error
	if !errors.As(err, &te) || !errors.Is(err, ErrUntrusted) {
		t.Fatalf("want a refusal of %s, got %v", path, err)
	}
	if te.Path != path {
		t.Fatalf("refused %s, want %s: %v", te.Path, path, err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("the refusal does not say %q: %v", w, err)
		}
	}
}
