package tape

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateName(t *testing.T) {
	for _, ok := range []string{"a", "acme", "trial-1", "review_1", "A0", strings.Repeat("x", 64)} {
		if err := ValidateName("epoch", ok); err != nil {
			t.Errorf("ValidateName(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "-a", "_a", ".", "..", "a.b", "a/b", `a\b`, "a b", "é", "a\x00", strings.Repeat("x", 65), "a:b"} {
		err := ValidateName("epoch", bad)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "epoch") {
			t.Errorf("ValidateName(%q) = %v, want ErrInvalid naming the kind", bad, err)
		}
	}
}

func TestValidateRequestID(t *testing.T) {
	for _, ok := range []string{"1", "call-1", "0190b7a2-6f1e-7c3a-9c1e-1f2e3d4c5b6a", "msg_01:retry.2", strings.Repeat("x", 128)} {
		if err := ValidateRequestID(ok); err != nil {
			t.Errorf("ValidateRequestID(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a b", "a/b", "a\nb", "é", strings.Repeat("x", 129)} {
		if err := ValidateRequestID(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("ValidateRequestID(%q) = %v, want ErrInvalid", bad, err)
		}
	}
}

// FuzzValidateName checks that every accepted name is safe as a path element and as a lock file
// name part.
func FuzzValidateName(f *testing.F) {
	for _, s := range []string{"acme", "trial-1", "..", "a/b", "", "x\x00", strings.Repeat("y", 65)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if ValidateName("tenant", name) != nil {
			return
		}
		if len(name) == 0 || len(name) > MaxNameLen || strings.ContainsAny(name, "./\\ \x00:") || name[0] == '-' {
			t.Fatalf("accepted unsafe name %q", name)
		}
		if ValidateRequestID(name) != nil {
			t.Fatalf("a valid name %q is not a valid request id", name)
		}
	})
}
