package racechild

import (
	"os"
	"testing"
)

// TestQuietKeepsYourSetting: a GORACE the person running the tests chose, even empty, stays.
func TestQuietKeepsYourSetting(t *testing.T) {
	t.Setenv("GORACE", "halt_on_error=1")
	Quiet()
	if got := os.Getenv("GORACE"); got != "halt_on_error=1" {
		t.Fatalf("GORACE = %q", got)
	}
	t.Setenv("GORACE", "")
	Quiet()
	if got, set := os.LookupEnv("GORACE"); !set || got != "" {
		t.Fatalf("GORACE = %q (set %v)", got, set)
	}
}
