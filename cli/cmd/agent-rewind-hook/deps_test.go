package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/internal/winpath"
)

// thin is every package agent-rewind-hook may link besides the runtime's internal ones: the
// process an agent starts before and after every tool call pays each one's size and init, so
// the guard itself (barrier, snapshot, workspace, hook), encoding/json, fmt, net, regexp and
// crypto stay in the guard server (agent-rewind hook-server). Adding one here needs a reason.
var thin = []string{
	"unsafe", "math/bits", "runtime", "errors", "sync/atomic", "sync", "io", "unicode/utf8", "path",
	"cmp", "iter", "slices", "syscall", "time", "io/fs", "os", "unicode", "strings", "path/filepath",
	"strconv",
	"structs", "unicode/utf16", // Windows: syscall's (its API takes UTF-16)
	"hash", "hash/fnv", // Windows: the named pipe's name is a hash of the socket path (hookwire.PipeName)
	"github.com/agent-rewind/rewind/cli/internal/statebase",
	"github.com/agent-rewind/rewind/cli/internal/hookwire",
	"github.com/agent-rewind/rewind/cli/internal/trust", // a server and its folder are checked before the environment is sent
	"github.com/agent-rewind/rewind/internal/winpath",   // Windows: trust opens paths past MAX_PATH
	"github.com/agent-rewind/rewind/cli/cmd/agent-rewind-hook",
}

func TestLinksOnlyTheThinClient(t *testing.T) {
	if winpath.UnderWine() {
		t.Skip("no Go toolchain in Wine's Windows: the build machine lists every system's packages")
	}
	for _, goos := range []string{"linux", "darwin", "windows"} {
		cmd := exec.Command("go", "list", "-deps", ".")
		cmd.Env = append(cmd.Environ(), "GOOS="+goos, "CGO_ENABLED=0")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("GOOS=%s go list -deps: %v", goos, err)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 10 {
			t.Fatalf("go list -deps listed %d packages: %q", len(deps), deps)
		}
		for _, d := range deps {
			if strings.HasPrefix(d, "internal/") || strings.HasPrefix(d, "runtime/internal/") || strings.HasPrefix(d, "vendor/") {
				continue
			}
			if !slices.Contains(thin, d) {
				t.Errorf("GOOS=%s: agent-rewind-hook links %s: the hook client must stay thin (the guard's work runs in agent-rewind hook-server); see thin in deps_test.go", goos, d)
			}
		}
	}
}
