package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/agent-rewind/rewind/cli/internal/ui"
)

// UICmd serves the workspace's web page on loopback.
type UICmd struct {
	Port   int  `help:"TCP port on 127.0.0.1 (0: any free port)." default:"0"`
	NoOpen bool `name:"no-open" help:"Print the address only; do not open a browser."`
}

// UIOutput is the --json shape of "ui", written once the page is served: its address (with the
// token every request needs), the workspace and its store.
type UIOutput struct {
	URL       string `json:"url"`
	Workspace string `json:"workspace"`
	Store     string `json:"store"`
}

// Run serves until interrupted (SIGINT, SIGTERM).
func (c *UICmd) Run(env *Env) error {
	ws, err := openWorkspace(env)
	if err != nil {
		return err
	}
	defer ws.Close()
	srv, err := ui.New(ws)
	if err != nil {
		return err
	}
	l, err := srv.Listen(c.Port)
	if err != nil {
		return err
	}
	// The browser is handed a file that holds the address, never the address itself: a
	// command line is readable by every local user, and the address carries the page's token.
	var launch string
	if !c.NoOpen && hasDesktop() {
		if launch, err = srv.WriteLaunchFile(); err != nil {
			return err
		}
		defer srv.RemoveLaunchFile()
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- hs.Serve(l) }()
	out := UIOutput{URL: srv.URL(), Workspace: ws.Root, Store: ws.Meta}
	if err := env.Emit(out, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "agent-rewind ui for %s\nopen %s\n(only this address works: it carries the page's token; Ctrl-C stops)\n", ws.Root, out.URL)
		return err
	}); err != nil {
		return err
	}
	if launch != "" {
		openBrowser(launch, env.Stderr)
	}
	select {
	case err := <-served:
		return fmt.Errorf("serve %s: %w", out.URL, err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// hasDesktop reports whether a browser can be opened here: always on macOS, where a display
// variable says so elsewhere (not on a server or in a CI job: the address is printed either way).
func hasDesktop() bool {
	return runtime.GOOS == "darwin" || os.Getenv("DISPLAY") != "" || os.Getenv("WAYLAND_DISPLAY") != ""
}

// openBrowser opens the launch file launch (ui.Server.WriteLaunchFile) in the desktop's browser,
// which it sends on to the page: the command line names the file, never the address.
func openBrowser(launch string, stderr io.Writer) {
	cmd := exec.Command("xdg-open", launch)
	if runtime.GOOS == "darwin" {
		cmd = exec.Command("open", launch)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "agent-rewind: could not open a browser (%v): open the address above by hand\n", err)
		return
	}
	go cmd.Wait()
}
