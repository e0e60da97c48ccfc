package baseline

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/agent-rewind/rewind/tools/bench/measure"
)

// MinimalServed is the floor of a hook answered by a server (agent-rewind-hook and its guard
// server): a Go client that reads its standard input, sends it over a unix socket to a Go server
// that answers at once with 29 bytes (the size of the guard server's last answer), and exits
// when the answer comes. Nothing a served hook does costs less; what it costs over MinimalGo is
// the connection and the two wake-ups, which no work saved in the server removes.
type MinimalServed struct {
	client, socket string
	server         *exec.Cmd
}

// servedClient links syscall and os only, as agent-rewind-hook links no net.
const servedClient = `package main

import (
	"io"
	"os"
	"syscall"
)

func main() {
	in, _ := io.ReadAll(os.Stdin)
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		os.Exit(2)
	}
	if err := syscall.Connect(fd, &syscall.SockaddrUnix{Name: os.Args[1]}); err != nil {
		os.Exit(2)
	}
	n := len(in)
	msg := append([]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}, in...)
	for len(msg) > 0 {
		k, err := syscall.Write(fd, msg)
		if err != nil {
			os.Exit(2)
		}
		msg = msg[k:]
	}
	var ans [29]byte
	for got := 0; got < len(ans); {
		k, err := syscall.Read(fd, ans[got:])
		if err != nil || k == 0 {
			os.Exit(2)
		}
		got += k
	}
}
`

// servedServer answers each connection on its own goroutine, as a Go server does.
const servedServer = `package main

import (
	"encoding/binary"
	"io"
	"net"
	"os"
)

func main() {
	l, err := net.Listen("unix", os.Args[1])
	if err != nil {
		os.Exit(2)
	}
	for {
		c, err := l.Accept()
		if err != nil {
			os.Exit(2)
		}
		go func() {
			defer c.Close()
			var n [4]byte
			if _, err := io.ReadFull(c, n[:]); err != nil {
				return
			}
			if _, err := io.CopyN(io.Discard, c, int64(binary.BigEndian.Uint32(n[:]))); err != nil {
				return
			}
			c.Write(make([]byte, 29))
		}()
	}
}
`

// StartMinimalServed builds the client and the server in dir (a scratch folder of its own) and
// starts the server; Stop ends it.
func StartMinimalServed(ctx context.Context, dir string) (*MinimalServed, error) {
	files := map[string]string{
		"go.mod":         "module minimalserved\n\ngo 1.22\n",
		"client/main.go": servedClient,
		"server/main.go": servedServer,
	}
	for name, content := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return nil, err
		}
	}
	for _, p := range []string{"client", "server"} {
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", filepath.Join(dir, p+".bin"), "./"+p)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=", "CGO_ENABLED=0")
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("build the minimal served %s: %v: %s", p, err, strings.TrimSpace(errb.String()))
		}
	}
	m := &MinimalServed{client: filepath.Join(dir, "client.bin"), socket: filepath.Join(dir, "sock")}
	m.server = exec.Command(filepath.Join(dir, "server.bin"), m.socket)
	if err := m.server.Start(); err != nil {
		return nil, fmt.Errorf("start the minimal served server: %w", err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := m.Run(ctx, []byte("ready?")); err == nil {
			return m, nil
		} else if time.Now().After(deadline) {
			m.Stop()
			return nil, fmt.Errorf("the minimal served server did not answer within 10s: %w", err)
		}
	}
}

// Run runs the client once with stdin and reports its wall time and peak RSS.
func (m *MinimalServed) Run(ctx context.Context, stdin []byte) (measure.Sample, error) {
	cmd := exec.CommandContext(ctx, m.client, m.socket)
	cmd.Stdin = bytes.NewReader(stdin)
	r, err := measure.Run(cmd)
	return r.Sample, err
}

// Stop ends the server.
func (m *MinimalServed) Stop() {
	m.server.Process.Kill()
	m.server.Wait()
}
