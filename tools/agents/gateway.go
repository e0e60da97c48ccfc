package agents

import (
	"bufio"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Gateway is an `agent-rewind gateway` process the harness started in front of a model.
type Gateway struct {
	URL    string // its base URL, "http://127.0.0.1:PORT"
	cmd    *exec.Cmd
	mu     sync.Mutex
	stderr strings.Builder
	once   sync.Once
	done   chan struct{} // closed when the process has exited
}

// Log returns what the gateway wrote to stderr so far (its banner and log lines).
func (g *Gateway) Log() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.stderr.String()
}

func (g *Gateway) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.stderr.Write(p)
}

// Gateway starts the built agent-rewind's gateway on a free loopback port in front of
// upstream, in a workspace of its own (its store is not the project's), with args added, and
// stops it when the test ends.
func (e *Env) Gateway(upstream string, args ...string) *Gateway {
	e.T.Helper()
	cmd := exec.Command(e.Bin.Rewind, append([]string{"gateway", "--port", "0", "--upstream", upstream}, args...)...)
	cmd.Dir = e.T.TempDir()
	cmd.Env = e.Environ()
	g := &Gateway{cmd: cmd}
	pr, pw := io.Pipe()
	cmd.Stderr = io.MultiWriter(g, pw)
	if err := cmd.Start(); err != nil {
		e.T.Fatal(err)
	}
	g.done = make(chan struct{})
	go func() { cmd.Wait(); pw.Close(); close(g.done) }()
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if addr, ok := strings.CutPrefix(sc.Text(), "agent-rewind gateway: listening on "); ok {
				found <- addr
			}
		}
		close(found)
	}()
	select {
	case addr, ok := <-found:
		if !ok {
			e.T.Fatalf("the gateway exited before listening:\n%s", g.Log())
		}
		g.URL = addr
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		e.T.Fatalf("the gateway did not print its address:\n%s", g.Log())
	}
	e.T.Cleanup(g.Stop)
	return g
}

// Stop ends the gateway (SIGTERM, so that it closes its tape and writes its savings) and waits
// for it; stopping it again does nothing.
func (g *Gateway) Stop() {
	g.once.Do(func() {
		g.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-g.done:
		case <-time.After(30 * time.Second):
			g.cmd.Process.Kill()
			<-g.done
		}
	})
}
