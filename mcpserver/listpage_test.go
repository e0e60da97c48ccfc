package mcpserver_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/mcpserver"
)

// The list tool pages: limit cuts a page, older names where the following one starts, and before
// that id returns it; out-of-range limits and unknown ids are input errors that say what to pass.
func TestListPages(t *testing.T) {
	ws := newStub()
	var want []string // newest first, as Workspace.List returns them
	for i := range 7 {
		want = append(want, fmt.Sprintf("cp%04d", 6-i))
	}
	ws.list = func() (mcpserver.ListResult, error) {
		r := mcpserver.ListResult{Current: want[0]}
		for _, id := range want {
			r.Entries = append(r.Entries, mcpserver.TimelineEntry{ID: id, Kind: mcpserver.KindCheckpoint})
		}
		return r, nil
	}
	cs := connect(t, ws, mcpserver.ProfileAll)
	var got []string
	args := map[string]any{"limit": 3}
	for range 4 {
		var ls mcpserver.ListResult
		text := callOK(t, cs, "list", args, &ls)
		for _, e := range ls.Entries {
			got = append(got, e.ID)
		}
		if ls.Truncated != (ls.Older != "") {
			t.Fatalf("page truncated %v but older %q", ls.Truncated, ls.Older)
		}
		if ls.Older == "" {
			if strings.Contains(ls.Next, "list with before") {
				t.Fatalf("the last page's next still pages: %q", ls.Next)
			}
			break
		}
		mustContain(t, "list next", ls.Next, "list with before "+ls.Older)
		mustContain(t, "list text", text, ls.Next)
		args = map[string]any{"limit": 3, "before": ls.Older}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("pages listed %v, want %v", got, want)
	}
	mustContain(t, "limit 51", callErr(t, cs, "list", map[string]any{"limit": 51}), "limit", "1 to 50")
	mustContain(t, "unknown before", callErr(t, cs, "list", map[string]any{"before": "cp9999"}), "before", "older of the previous page")
}
