package gateway

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/tools/mockanthropic"
)

// TestUnreadableBody: a Messages call whose body cannot be read (a malformed chunk size, a
// body cut short of its Content-Length) is answered 400 in the API's error shape and logged,
// in memory and tape mode, and never reaches the upstream. Sent over a real TCP connection,
// since no well-behaved client can send such a body.
func TestUnreadableBody(t *testing.T) {
	body := messagesBody("hello", false)
	requests := map[string]string{
		"bad-chunk": "POST /v1/messages HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nAnthropic-Version: 2023-06-01\r\nTransfer-Encoding: chunked\r\n\r\n" +
			"zz\r\n" + body + "\r\n0\r\n\r\n",
		"short": "POST /v1/messages HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nAnthropic-Version: 2023-06-01\r\nContent-Length: " +
			"1000\r\n\r\n" + body,
	}
	for _, mode := range []string{"memory", "tape-record", "tape-replay"} {
		t.Run(mode, func(t *testing.T) {
			mock := startMock(t, mockanthropic.Options{})
			cfg, log := testConfig(t, mock.URL)
			switch mode {
			case "tape-record":
				tapeMode(t, cfg, "")
			case "tape-replay":
				tapeMode(t, cfg, "review-1")
			}
			_, url := startGateway(t, cfg)
			for name, raw := range requests {
				resp, got := rawCall(t, strings.TrimPrefix(url, "http://"), raw)
				if resp.StatusCode != http.StatusBadRequest {
					t.Fatalf("%s: status %d, want 400: %s", name, resp.StatusCode, got)
				}
				var e struct {
					Type  string `json:"type"`
					Error struct {
						Type    string `json:"type"`
						Code    string `json:"code"`
						Message string `json:"message"`
					} `json:"error"`
				}
				if err := json.Unmarshal(got, &e); err != nil {
					t.Fatalf("%s: the body is not JSON: %v: %q", name, err, got)
				}
				if e.Type != "error" || e.Error.Type != "invalid_request_error" || e.Error.Code != "body_unreadable" ||
					!strings.Contains(e.Error.Message, "could not be read") {
					t.Errorf("%s: error %+v", name, e)
				}
				if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("%s: Content-Type %q", name, ct)
				}
			}
			if n := strings.Count(log.String(), "the body could not be read"); n != len(requests) {
				t.Errorf("%d log lines about unreadable bodies, want %d: %s", n, len(requests), log.String())
			}
			if mock.Hits() != 0 {
				t.Errorf("the upstream got %d calls, want 0", mock.Hits())
			}
		})
	}
}

// rawCall writes raw on a new connection to addr, closes the writing half (so a body cut
// short ends there) and reads the response.
func rawCall(t *testing.T, addr, raw string) (*http.Response, []byte) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}
