package ui

import (
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agent-rewind/rewind/cli/internal/trust"
)

// The page's address carries its token, which every request needs (and the page its CSRF
// token): a browser must be handed it without a command line, which every local user can read
// (/proc/PID/cmdline, ps). So the browser is given the path of a launch file, readable by this
// user alone (0600, in a folder of mode 0700), that sends it on to the address; the file is
// removed as soon as the page has been served once, and when the server stops.

// launchPage is the launch file: it goes on to the address at once (a refresh, and a script
// for a browser that ignores refreshes of local files), and links it for one that does neither.
var launchPage = template.Must(template.New("launch").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">
<meta http-equiv="refresh" content="0;url={{.}}">
<title>agent-rewind ui</title></head>
<body><p><a href="{{.}}">Open agent-rewind ui</a></p>
<script>location.replace({{.}})</script></body></html>
`))

// launch is the launch file of a server, once written.
type launch struct {
	once sync.Once
	dir  string // the private folder that holds it
}

// WriteLaunchFile writes the launch file for the page's address and returns its path: in a new
// folder of mode 0700 in $XDG_RUNTIME_DIR (when set and trusted) or the temporary folder. The
// file goes when the page is first served (or RemoveLaunchFile is called).
func (s *Server) WriteLaunchFile() (string, error) {
	parent := os.TempDir()
	if rt := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(rt) && trust.Folder(rt) == nil {
		parent = rt
	}
	dir, err := os.MkdirTemp(parent, "agent-rewind-ui-") // mode 0700, made by this call
	if err != nil {
		return "", fmt.Errorf("make a private folder for the browser's launch file: %w", err)
	}
	name := filepath.Join(dir, "open.html")
	var b strings.Builder
	launchPage.Execute(&b, s.URL())
	if err := os.WriteFile(name, []byte(b.String()), 0o600); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("write the browser's launch file: %w", err)
	}
	s.launch.dir = dir
	return name, nil
}

// RemoveLaunchFile removes the launch file and its folder, if written and not removed yet.
func (s *Server) RemoveLaunchFile() {
	s.launch.once.Do(func() {
		if s.launch.dir != "" {
			os.RemoveAll(s.launch.dir)
		}
	})
}
