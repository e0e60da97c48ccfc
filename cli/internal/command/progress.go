package command

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/agent-rewind/rewind/snapshot"
)

// progressDelay is how long an operation runs before its progress is shown: a quick checkpoint
// draws nothing, so a terminal is not flickered at for a few hundred milliseconds.
const progressDelay = time.Second

// progressLine draws a long operation's progress on one terminal line, redrawn in place and
// cleared at the end. It is only used when stderr is a terminal (see newProgress): piped or
// redirected stderr stays free of carriage returns and escape codes.
type progressLine struct {
	w     io.Writer
	start time.Time
	delay time.Duration
	now   func() time.Time

	mu    sync.Mutex
	drawn bool // a line is on the screen and must be cleared
}

// newProgress returns a progress line on stderr when stderr is a terminal, else nil (which
// reports nothing: every method is nil-safe).
func newProgress(stderr io.Writer) *progressLine {
	if !isTerminal(stderr) {
		return nil
	}
	return &progressLine{w: stderr, start: time.Now(), delay: progressDelay, now: time.Now}
}

// isTerminal reports whether w is an *os.File on a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// report draws p once the operation has run for the delay; it is snapshot.Options.Progress.
func (l *progressLine) report(p snapshot.Progress) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.now().Sub(l.start) < l.delay {
		return
	}
	// \r: back to the line's start; ESC[K: erase what a longer earlier line left to the right.
	fmt.Fprintf(l.w, "\r%s\x1b[K", progressText(p))
	l.drawn = true
}

// clear erases the progress line, if one was drawn, so that what follows starts on a clean line.
func (l *progressLine) clear() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.drawn {
		fmt.Fprint(l.w, "\r\x1b[K")
		l.drawn = false
	}
}

// progressText is one progress report as a short line.
func progressText(p snapshot.Progress) string {
	switch p.Phase {
	case "scan":
		return fmt.Sprintf("scanning the workspace: %s entries", count(p.Done))
	case "hash":
		return fmt.Sprintf("reading changed files: %s of %s, %s", count(p.Done), count(p.Total), byteSize(p.Bytes))
	case "restore":
		return fmt.Sprintf("restoring: %s of %s changes", count(p.Done), count(p.Total))
	}
	if p.Total > 0 {
		return fmt.Sprintf("%s: %s of %s", p.Phase, count(p.Done), count(p.Total))
	}
	return fmt.Sprintf("%s: %s", p.Phase, count(p.Done))
}
