package watch

import (
	"bufio"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServerRefusesBadRequests: garbage, an unknown op, or an endless line get an error reply
// (or the connection closed), and the watcher keeps answering.
func TestServerRefusesBadRequests(t *testing.T) {
	root, store := t.TempDir(), filepath.Join(t.TempDir(), "store")
	startWatcher(t, root, store)
	for _, req := range []string{"not json\n", `{"op":"explode"}` + "\n", strings.Repeat("x", 1<<20)} {
		c, err := net.Dial("unix", filepath.Join(dir(store), "sock"))
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		go c.Write([]byte(req))
		line, _ := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if !strings.Contains(line, `"error"`) {
			t.Errorf("request %.20q: reply %q, want an error", req, line)
		}
	}
	if _, err := Ask(store, Request{Op: "status"}, 5*time.Second); err != nil {
		t.Fatalf("after bad requests: %v", err)
	}
}
