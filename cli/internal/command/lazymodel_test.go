package command

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// parseWith parses args as Main does, with or without the lazy model: the command chosen, the
// values parsed, and the error.
func parseWith(t *testing.T, lazy bool, args []string) (cmd string, cli CLI, err error) {
	t.Helper()
	old := lazyModel
	lazyModel = lazy
	defer func() { lazyModel = old }()
	parser, err := newParser(&cli, args, kong.Name("agent-rewind"), kong.Writers(io.Discard, io.Discard),
		kong.Exit(func(int) { panic("kong exited") }))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if r := recover(); r != nil {
			err = errors.New("kong exited")
		}
	}()
	ctx, err := parser.Parse(args)
	if err != nil {
		return "", cli, err
	}
	return ctx.Command(), cli, nil
}

// checkLazyModel: a command line parses to the same command and values, or the same error, with
// the model of the chosen command alone as with the whole command tree.
func checkLazyModel(t *testing.T, args []string) {
	t.Helper()
	wantCmd, want, wantErr := parseWith(t, false, args)
	gotCmd, got, gotErr := parseWith(t, true, args)
	if (wantErr == nil) != (gotErr == nil) || wantErr != nil && wantErr.Error() != gotErr.Error() {
		t.Fatalf("%q: error %v with the chosen command's model, %v with the whole", args, gotErr, wantErr)
	}
	// The whole model also sets the defaults of the commands not chosen: only the global flags
	// and the chosen command's values count.
	if gotCmd != wantCmd || !reflect.DeepEqual(got.Globals, want.Globals) {
		t.Fatalf("%q: parsed to %q %+v with the chosen command's model, %q %+v with the whole", args, gotCmd, got.Globals, wantCmd, want.Globals)
	}
	if wantCmd == "" {
		return
	}
	name, _, _ := strings.Cut(wantCmd, " ")
	_, g, _ := commandField(&got, name)
	_, w, _ := commandField(&want, name)
	if !reflect.DeepEqual(g.Interface(), w.Interface()) {
		t.Fatalf("%q: %s parsed to %+v with its own model, %+v with the whole", args, name, g.Interface(), w.Interface())
	}
}

func TestLazyModel(t *testing.T) {
	lines := []string{
		"version", "--json version", "checkpoint", "checkpoint before the refactor", "--workspace /tmp/w --json checkpoint x", "--exact-workspace checkpoint", "--workspace /tmp/w --exact-workspace --json store", "store --exact-workspace",
		"list", "--json list --limit 5", "rewind abc123", "rewind", "restore abc123 src/a.go", "diff", "diff abc def",
		"gc --keep-last 3 --dry-run", "gc --orphans", "check", "check --repair", "watch status", "watch stop", "watch run --idle 1h",
		"store", "store --adopt /tmp/old", "release k", "effects", "chain verify", "chain export --out /tmp/x",
		"cache-report --body x.json", "prune", "cache-compare a b", "analyze --file x", "mcp", "mcp --profile all", "gateway",
		"gateway --port 0", "savings", "ui", "--state-dir /tmp/s list", "--workspace=/tmp/w list",
		"checkpoint --bogus", "list extra args", "gc --keep-last notanumber", "chain", "chain nope", "watch",
		"--json", "--workspace checkpoint list", "--state-dir=/tmp/s --workspace=/tmp/w --json effects",
	}
	for _, l := range lines {
		checkLazyModel(t, strings.Fields(l))
	}
}

// FuzzLazyModel: any command line parses the same with the chosen command's model as with the
// whole. The fuzz input is the arguments joined by NUL.
func FuzzLazyModel(f *testing.F) {
	for _, s := range []string{"version", "--json\x00list", "gc\x00--keep-last\x003", "checkpoint\x00--bogus", "chain\x00verify", "--workspace\x00checkpoint\x00list"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, joined string) {
		checkLazyModel(t, strings.Split(joined, "\x00"))
	})
}
