package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// realSessions writes a store the way Claude Code sessions write one: the plugin's PreToolUse
// hook before every call (session ids are UUIDs, tool call ids toolu_ and 24 characters), 46
// calls in two sessions of Edit, Write, MultiEdit and long Bash commands, each followed by what
// the tool did, and a rewind to before a call of the first session in the middle (a safety
// checkpoint between its calls). It returns the two session ids.
func realSessions(t *testing.T, project string) (first, second string) {
	first, second = "3f7c9a2e-5b1d-4e8f-9a6c-2d4b8e1f0a7c", "b8e2d4f6-1a3c-4e5b-8d7f-9c0e2a4b6d8f"
	callID := func(s string, i int) string {
		return fmt.Sprintf("toolu_01%s%014d", strings.ToUpper(strings.ReplaceAll(s[:10], "-", "")), i)
	}
	var rewindTo string
	for i := range 46 {
		session := first
		if i >= 24 {
			session = second
		}
		file := filepath.Join(project, "internal", fmt.Sprintf("pkg%d", i%5), fmt.Sprintf("file%02d.go", i%9))
		var input string
		switch i % 4 {
		case 0:
			input = hookInput(t, "PreToolUse", "Edit", map[string]any{"file_path": file, "old_string": "x", "new_string": "y"}, callID(session, i), map[string]any{"session_id": session})
		case 1:
			input = hookInput(t, "PreToolUse", "Bash", map[string]any{"command": fmt.Sprintf("go test ./internal/pkg%d/... -run 'TestSomethingLong|TestAnotherThing' -count=1 2>&1 | tee /tmp/out-%d.txt", i%5, i), "description": "run the tests"}, callID(session, i), map[string]any{"session_id": session})
		case 2:
			input = hookInput(t, "PreToolUse", "Write", map[string]any{"file_path": file, "content": "package x\n"}, callID(session, i), map[string]any{"session_id": session})
		default:
			input = hookInput(t, "PreToolUse", "MultiEdit", map[string]any{"file_path": file, "edits": []any{}}, callID(session, i), map[string]any{"session_id": session})
		}
		if r := preToolUse(t, project, input); r.code != 0 {
			t.Fatalf("call %d: the hook said %+v", i, r)
		}
		putFile(t, project, strings.TrimPrefix(file, project+"/"), fmt.Sprintf("package pkg\n\n// edit %d\n", i), 0o644)
		if i == 12 {
			rewindTo = callID(session, 8)
		}
		if i == 16 { // the person rewinds to before call 8, and the session goes on
			mustRun(t, project, "rewind", rewindTo)
		}
	}
	return first, second
}

// TestUISessionHeadersAtCommonWidths: on a store real sessions wrote (realSessions), at 1280,
// 1024, 768 and 390 pixels wide, every row of the timeline (a session's header included) keeps
// its contents inside its own box, and no two rows overlap: the header of a session with a UUID
// id and dozens of calls once wrapped over three lines and was drawn over the rows below it. A
// screenshot of each width is saved in REWIND_UI_SCREENSHOTS, else in the test's temporary
// folder, and logged.
func TestUISessionHeadersAtCommonWidths(t *testing.T) {
	// One of the package's slowest (each process a -race binary): run beside the others' tail.
	t.Parallel()
	ctx := browser(t)
	project := t.TempDir()
	putFile(t, project, "go.mod", "module example.com/p\n", 0o644)
	first, second := realSessions(t, project)
	srv := startUI(t, project)
	shots := os.Getenv("REWIND_UI_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	// Each row's box, and every element in it whose box leaves the row's; then any two rows whose
	// boxes intersect. Rows are 44 px high by design (the graph's circles are drawn at that pitch).
	const check = `(() => {
	  const bad = [];
	  const rows = [...document.querySelectorAll("#timeline .row")];
	  const name = (r) => r.id || (r.classList.contains("group-row") ? "session header: " + r.textContent.slice(0, 40) : r.className);
	  for (const r of rows) {
	    const b = r.getBoundingClientRect();
	    if (r.scrollHeight > r.clientHeight + 1) bad.push(name(r) + ": content " + r.scrollHeight + " px high in a row of " + r.clientHeight);
	    for (const e of r.querySelectorAll("*")) {
	      const c = e.getBoundingClientRect();
	      if (c.width === 0 || c.height === 0) continue;
	      const visible = getComputedStyle(e).visibility !== "hidden";
	      if (visible && (c.top < b.top - 1 || c.bottom > b.bottom + 1)) bad.push(name(r) + ": " + e.tagName + "." + e.className + " spans " + Math.round(c.top) + "-" + Math.round(c.bottom) + ", outside the row's " + Math.round(b.top) + "-" + Math.round(b.bottom));
	      if (visible && c.right > b.right + 1) bad.push(name(r) + ": " + e.tagName + "." + e.className + " ends at x " + Math.round(c.right) + ", right of the row's " + Math.round(b.right));
	    }
	  }
	  const col = document.querySelector(".timeline-col").getBoundingClientRect();
	  if (rows.length && rows[0].getBoundingClientRect().right > col.right + 1) bad.push("the rows end at x " + Math.round(rows[0].getBoundingClientRect().right) + ", right of the timeline's box at " + Math.round(col.right));
	  if (document.documentElement.scrollWidth > innerWidth + 1) bad.push("the page is " + document.documentElement.scrollWidth + " px wide in a window of " + innerWidth);
	  for (let i = 1; i < rows.length; i++) {
	    const a = rows[i - 1].getBoundingClientRect(), b = rows[i].getBoundingClientRect();
	    if (b.top < a.bottom - 1) bad.push(name(rows[i - 1]) + " and " + name(rows[i]) + " overlap");
	  }
	  return JSON.stringify({rows: rows.length, groups: document.querySelectorAll("#timeline .group-row").length, bad});
	})()`
	for _, w := range []int64{1280, 1024, 768, 390} {
		var out string
		err := chromedp.Do(ctx,
			chromedp.EmulateViewport(w, 900),
			chromedp.Navigate(srv.url),
			chromedp.WaitVisible(chromedp.CSS("#timeline .group-row")),
			chromedp.Sleep(200*time.Millisecond), // fonts and layout settle
			into(&out, chromedp.Evaluate[string](check)),
		)
		if err != nil {
			t.Fatalf("width %d: %v", w, err)
		}
		var png []byte
		if err := chromedp.Do(ctx, into(&png, chromedp.FullScreenshot(100))); err != nil {
			t.Fatal(err)
		}
		shot := filepath.Join(shots, fmt.Sprintf("ui-sessions-%d.png", w))
		if err := os.WriteFile(shot, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("width %d: %s (screenshot %s)", w, out, shot)
		if !strings.Contains(out, `"bad":[]`) {
			t.Errorf("width %d: rows overflow or overlap: %s", w, out)
		}
	}
	// The headers name both sessions (a long id is shortened on the row, whole in its title).
	var titles string
	if err := chromedp.Do(ctx, into(&titles, chromedp.Evaluate[string](`[...document.querySelectorAll("#timeline .group-row [title]")].map(e => e.title).join("\n")`))); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{first, second} {
		if !strings.Contains(titles, s) {
			t.Errorf("no session header names %s in its title:\n%s", s, titles)
		}
	}
}
