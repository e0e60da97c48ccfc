package hook

import (
	"runtime/debug"
	"testing"
)

// TestModuleVersion: go install ...@v0.1.0 records the module version, which both binaries then
// report (the hook in its usage line); a source tree's build is "devel".
func TestModuleVersion(t *testing.T) {
	for _, c := range []struct {
		bi   *debug.BuildInfo
		ok   bool
		want string
	}{
		{&debug.BuildInfo{Main: debug.Module{Version: "v0.1.0"}}, true, "v0.1.0"},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true, "devel"},
		{&debug.BuildInfo{}, true, "devel"},
		{nil, false, "devel"},
	} {
		if got := moduleVersion(c.bi, c.ok); got != c.want {
			t.Errorf("moduleVersion(%+v, %v) = %q, want %q", c.bi, c.ok, got, c.want)
		}
	}
}
