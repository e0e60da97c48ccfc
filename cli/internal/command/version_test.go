package command

import "testing"

// TestBuildKind: a release names its commit; a source build says it is a development build and
// from which commit, or that none was recorded.
func TestBuildKind(t *testing.T) {
	for _, c := range []struct {
		info VersionInfo
		want string
	}{
		{VersionInfo{Version: "v0.3.0", Commit: "abc123"}, "release, commit abc123"},
		{VersionInfo{Version: "v0.3.0"}, "release"},
		{VersionInfo{Version: "devel", Commit: "abc123"}, "development build from commit abc123"},
		{VersionInfo{Version: "devel", Commit: "abc123", Modified: true}, "development build from commit abc123 with uncommitted changes"},
		{VersionInfo{Version: "devel"}, "development build, commit not recorded"},
	} {
		if got := buildKind(c.info); got != c.want {
			t.Errorf("buildKind(%+v) = %q, want %q", c.info, got, c.want)
		}
	}
}
