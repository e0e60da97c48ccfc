package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// fakeAgent is what the test binary does when BENCH_FAKE_AGENT=1: a stand-in for the
// agent-rewind binary with just enough of each command the suites measure for their measuring
// code to run end to end before the real modules exist. It is a fake at the bench's own seam
// (the binary it measures); its figures are never reported anywhere but in these tests.
func fakeAgent(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ws := "."
	var words []string
	help := false
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--workspace" && i+1 < len(args):
			ws = args[i+1]
			i++
		case a == "--json":
		case a == "--help":
			help = true
		default:
			words = append(words, a)
		}
	}
	known := [][]string{{"version"}, {"checkpoint"}, {"rewind"}, {"guard"}, {"chain", "verify"}, {"analyze"}, {"cache-compare"}, {"mcp"}, {"gateway"}, {"store"}}
	var cmd []string
	for _, k := range known {
		if len(words) >= len(k) && slices.Equal(words[:len(k)], k) {
			cmd = k
		}
	}
	if cmd == nil {
		fmt.Fprintf(stderr, "fake agent-rewind: unexpected argument %v\n", words)
		return 80
	}
	if help {
		return 0
	}
	rest := words[len(cmd):]
	flag := func(name string) string {
		for i, a := range rest {
			if a == name && i+1 < len(rest) {
				return rest[i+1]
			}
		}
		return ""
	}
	var err error
	switch strings.Join(cmd, " ") {
	case "version":
		fmt.Fprintln(stdout, "agent-rewind fake")
	case "checkpoint":
		var id string
		if id, err = fakeCheckpoint(ws); err == nil {
			fmt.Fprintf(stdout, "{\"id\": %q}\n", id)
		}
	case "rewind":
		if len(rest) != 1 {
			return 80
		}
		if _, err = fakeCheckpoint(ws); err == nil {
			err = fakeRestore(ws, rest[0])
		}
	case "guard":
		err = fakeGuard(ws, stdin, stderr)
		if errors.Is(err, errRefused) {
			return 2
		}
	case "chain verify", "analyze":
		var b []byte
		if b, err = os.ReadFile(flag("--file")); err == nil {
			fmt.Fprintf(stdout, "{\"records\": %d}\n", bytes.Count(b, []byte("\n")))
		}
	case "cache-compare":
		for _, f := range rest {
			if _, err = os.ReadFile(f); err != nil {
				break
			}
		}
		fmt.Fprintln(stdout, `{"classification": "appended messages"}`)
	case "store":
		if _, err = os.Stat(fakeStore(ws)); err == nil {
			fmt.Fprintf(stdout, "{\"store\": %q}\n", fakeStore(ws))
		}
	case "mcp":
		err = fakeMCP(flag("--profile"), stdin, stdout)
	case "gateway":
		err = fakeGateway(flag("--port"), flag("--upstream"))
	}
	if err != nil {
		fmt.Fprintf(stderr, "fake agent-rewind: %v\n", err)
		return 1
	}
	return 0
}

// fakeStore is the fake's store of the workspace ws: outside it, under XDG_STATE_HOME (which the
// bench points at its scratch), as the real agent-rewind keeps its stores (docs/store.md).
func fakeStore(ws string) string {
	abs, _ := filepath.Abs(ws)
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(os.Getenv("XDG_STATE_HOME"), "fake-agent-rewind", hex.EncodeToString(sum[:8]))
}

// fakeCheckpoint copies the workspace to <store>/fake/<n>.
func fakeCheckpoint(ws string) (string, error) {
	dir := filepath.Join(fakeStore(ws), "fake")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	id := fmt.Sprintf("cp%d", len(ents)+1)
	return id, copyTree(ws, filepath.Join(dir, id))
}

// fakeRestore empties the workspace and copies checkpoint id back.
func fakeRestore(ws, id string) error {
	ents, err := os.ReadDir(ws)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if err := os.RemoveAll(filepath.Join(ws, e.Name())); err != nil {
			return err
		}
	}
	return copyTree(filepath.Join(fakeStore(ws), "fake", id), ws)
}

func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			if err := os.MkdirAll(to, 0o755); err != nil {
				return err
			}
			return os.Chmod(to, info.Mode().Perm())
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if err := os.WriteFile(to, b, info.Mode().Perm()); err != nil {
				return err
			}
			return os.Chmod(to, info.Mode().Perm())
		}
	})
}

var errRefused = errors.New("refused: this key has already fired")

// fakeGuard allows every hook call and admits each explicit key once.
func fakeGuard(ws string, stdin io.Reader, stderr io.Writer) error {
	var in map[string]any
	if err := json.NewDecoder(stdin).Decode(&in); err != nil {
		return err
	}
	key, ok := in["key"].(string)
	if !ok {
		return nil
	}
	dir := filepath.Join(fakeStore(ws), "fake-keys")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(key))
	f, err := os.OpenFile(filepath.Join(dir, hex.EncodeToString(sum[:])), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if errors.Is(err, fs.ErrExist) {
		fmt.Fprintln(stderr, errRefused)
		return errRefused
	}
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return f.Close()
}

// fakeMCP answers initialize and tools/list over newline-delimited JSON-RPC.
func fakeMCP(profile string, stdin io.Reader, stdout io.Writer) error {
	count := map[string]int{"lean": 3, "recovery": 7, "analytics": 1, "all": 8}[profile]
	sc := bufio.NewScanner(stdin)
	enc := json.NewEncoder(stdout)
	for sc.Scan() {
		var req struct {
			ID     *int   `json:"id"`
			Method string `json:"method"`
		}
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			return err
		}
		if req.ID == nil {
			continue
		}
		var result any
		switch req.Method {
		case "initialize":
			result = map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "fake", "version": "0"}, "instructions": "Checkpoint before risky work; rewind if it goes wrong."}
		case "tools/list":
			var tools []any
			for i := range count {
				tools = append(tools, map[string]any{"name": fmt.Sprintf("tool%d", i), "description": "A <fake> tool.",
					"inputSchema": map[string]any{"type": "object"}, "outputSchema": map[string]any{"type": "object"}})
			}
			result = map[string]any{"tools": tools}
		default:
			result = map[string]any{}
		}
		if err := enc.Encode(map[string]any{"jsonrpc": "2.0", "id": *req.ID, "result": result}); err != nil {
			return err
		}
	}
	return sc.Err()
}

// fakeGateway forwards /v1/messages to upstream and replays complete 200 responses from memory
// for an identical body and key (it buffers streams: a real gateway must not).
func fakeGateway(port, upstream string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	ln, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		return err
	}
	type stored struct {
		ctype string
		body  []byte
	}
	var mu sync.Mutex
	memory := map[string]stored{}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		sum := sha256.Sum256(append(append(body, r.URL.Path+r.Header.Get("x-api-key")...), r.Header.Get("authorization")...))
		key := hex.EncodeToString(sum[:])
		mu.Lock()
		s, ok := memory[key]
		mu.Unlock()
		if !ok {
			req, _ := http.NewRequestWithContext(r.Context(), r.Method, upstream+r.URL.Path, bytes.NewReader(body))
			for _, h := range []string{"x-api-key", "authorization", "anthropic-version", "content-type"} {
				req.Header.Set(h, r.Header.Get(h))
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			s = stored{resp.Header.Get("Content-Type"), b}
			if resp.StatusCode != http.StatusOK {
				w.WriteHeader(resp.StatusCode)
				w.Write(b)
				return
			}
			mu.Lock()
			memory[key] = s
			mu.Unlock()
		}
		w.Header().Set("Content-Type", s.ctype)
		w.Write(s.body)
	})}
	go func() { <-ctx.Done(); srv.Close() }()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
