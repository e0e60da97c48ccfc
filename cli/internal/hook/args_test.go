package hook

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseArgs(t *testing.T) {
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args  []string
		ok    bool
		ws    string // "" for none given; "CWD" for the working directory
		state string
		input string
	}{
		{[]string{"guard"}, true, "CWD", "", ""},
		{[]string{"--workspace", "/w", "guard", "--checkpoint"}, true, "/w", "", ""},
		{[]string{"--workspace=", "--json", "guard", "{}"}, true, "", "", "{}"},
		{[]string{"--state-dir", "/s", "--workspace", "/w", "guard"}, true, "/w", "/s", ""},
		{[]string{"guard", "--workspace", "${CLAUDE_PROJECT_DIR}"}, true, "${CLAUDE_PROJECT_DIR}", "", ""},
		{[]string{}, false, "", "", ""},
		{[]string{"version"}, false, "", "", ""},
		{[]string{"--checkpoint", "guard"}, false, "", "", ""},
		{[]string{"guard", "{}", "{}"}, false, "", "", ""},
		{[]string{"--state-dir", "", "guard"}, false, "", "", ""},
		{[]string{"--", "guard"}, false, "", "", ""},
		{[]string{"guard", "-h"}, false, "", "", ""},
	} {
		call, state, ok := ParseArgs(c.args, cwd)
		if ok != c.ok {
			t.Errorf("%q: ok %v, want %v", c.args, ok, c.ok)
			continue
		}
		if !ok {
			continue
		}
		want := c.ws
		switch {
		case want == "CWD":
			want, _ = filepath.Abs(".")
		case want != "" && !filepath.IsAbs(want):
			want, _ = filepath.Abs(want)
		}
		if call.Workspace != want || state != c.state || call.Input != c.input {
			t.Errorf("%q: workspace %q state %q input %q; want %q %q %q", c.args, call.Workspace, state, call.Input, want, c.state, c.input)
		}
	}
}

// FuzzParseArgs: any argument list is parsed without a panic, and what is accepted names the
// guard, with an absolute workspace (or the empty one given).
func FuzzParseArgs(f *testing.F) {
	for _, s := range []string{"guard", "--workspace\x00/w\x00guard\x00--checkpoint", "--state-dir=x\x00guard\x00{}", "--workspace=\x00guard"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, joined string) {
		args := strings.Split(joined, "\x00")
		call, state, ok := ParseArgs(args, "/wd")
		if !ok {
			return
		}
		if !slices.Contains(args, "guard") {
			t.Fatalf("%q accepted without the guard command", args)
		}
		if call.Workspace != "" && !filepath.IsAbs(call.Workspace) && !strings.HasPrefix(call.WorkspaceFlag, "~/") {
			t.Fatalf("%q: workspace %q is not absolute", args, call.Workspace)
		}
		if state != "" && !filepath.IsAbs(state) && !strings.Contains(joined, "~/") {
			t.Fatalf("%q: state folder %q is not absolute", args, state)
		}
	})
}
