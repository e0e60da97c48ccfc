package command

import (
	"io"
	"testing"
	"time"

	"github.com/alecthomas/kong"

	"github.com/agent-rewind/rewind/snapshot"
)

// The retention gc applies by default is the one the automatic maintenance applies (a guard
// server runs snapshot.AutoRetention; a hook without one runs "gc --auto" with these defaults).
func TestGCAutoDefaultsAreTheMaintenanceRetention(t *testing.T) {
	var cli CLI
	parser, err := kong.New(&cli, kong.Name("agent-rewind"), kong.Writers(io.Discard, io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parser.Parse([]string{"gc", "--auto"}); err != nil {
		t.Fatal(err)
	}
	if cli.GC.AutoKeepLast != snapshot.AutoRetention.AutoKeepLast || time.Duration(cli.GC.AutoKeepWithin) != snapshot.AutoRetention.AutoKeepWithin {
		t.Fatalf("gc's defaults: --auto-keep-last %d --auto-keep-within %s; the maintenance's: %+v",
			cli.GC.AutoKeepLast, time.Duration(cli.GC.AutoKeepWithin), snapshot.AutoRetention)
	}
}
