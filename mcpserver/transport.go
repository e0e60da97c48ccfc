package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxMessageSize is the largest message, in bytes without its newline, that
// StdioTransport takes by default: the go-sdk's own line limit, 16 MiB.
const DefaultMaxMessageSize = mcp.DefaultMaxLineLength

// StdioTransport is MCP's stdio transport, newline-delimited JSON-RPC 2.0 (one message a line),
// made to outlive a bad message. The go-sdk's StdioTransport ends the session on the first line
// it cannot take: one over its size limit (a large guard_effect payload), one that is not JSON,
// one that is not a JSON-RPC message. StdioTransport reads the lines first and answers each such
// line with a JSON-RPC error instead (the line's id when it can be read from the line, else
// null), reports it on Log, and goes on serving; the lines it takes go to the go-sdk's
// connection unchanged. JSON-RPC batches (arrays), which MCP dropped in protocol 2025-06-18 and
// the go-sdk then answers by ending the session, are refused the same way.
type StdioTransport struct {
	In  io.Reader // nil: os.Stdin
	Out io.Writer // nil: os.Stdout
	// Log receives one line per refused message; nil: none.
	Log io.Writer
	// MaxMessageSize bounds one message (one line) in bytes; 0 means DefaultMaxMessageSize.
	MaxMessageSize int
}

// Connect implements mcp.Transport. It starts the goroutine that screens the input; it ends when
// the input does, or at the first line after the connection closes.
func (t *StdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	in, out := t.In, t.Out
	if in == nil {
		in = os.Stdin
	}
	if out == nil {
		out = os.Stdout
	}
	limit := t.MaxMessageSize
	if limit <= 0 {
		limit = DefaultMaxMessageSize
	}
	w := &lockedWriter{w: out}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(screenLines(in, pw, w, t.Log, limit)) }()
	// No limit of the SDK's own: every line it gets is at most limit bytes.
	return (&mcp.IOTransport{Reader: pr, Writer: w, MaxLineLength: -1}).Connect(ctx)
}

// lockedWriter makes each Write whole with respect to the others: the go-sdk writes a message in
// one Write, and the screen writes its errors between them.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Close does not close the output: stdout outlives the session.
func (l *lockedWriter) Close() error { return nil }

// screenLines reads newline-delimited messages from in until it ends, forwards each one the
// go-sdk can take to fwd as one line, and answers each other one on reply. It returns nil at
// the end of in, the error that stopped reading in, or the error writing fwd (the connection
// closed).
func screenLines(in io.Reader, fwd, reply, log io.Writer, limit int) error {
	br := bufio.NewReaderSize(in, 64<<10)
	var buf []byte
	for {
		line, size, readErr := readLine(br, buf[:0], limit)
		buf = line
		if cap(buf) > 1<<20 {
			buf = nil // let an outsized line's storage go
		}
		if size > 0 {
			if r := screen(line, size, limit); r != nil {
				if _, err := reply.Write(r.response()); err != nil {
					return err
				}
				if log != nil {
					fmt.Fprintf(log, "%s mcp: refused a message of %d bytes (id %s): %s\n", ServerName, size, r.idText(), r.message)
				}
			} else if msg := bytes.Trim(line, jsonSpace); len(msg) > 0 {
				if _, err := fwd.Write(append(msg, '\n')); err != nil {
					return err
				}
			}
		}
		if readErr == io.EOF {
			return nil
		}
		if readErr != nil {
			return readErr
		}
	}
}

// jsonSpace is JSON's insignificant whitespace.
const jsonSpace = " \t\r\n"

// readLine reads one line and returns it without its newline (buf's storage is reused) and its
// size in bytes. Of a line over limit only the first limit+1 bytes are kept; the rest is read
// and dropped, so that the next line starts clean.
func readLine(br *bufio.Reader, buf []byte, limit int) (line []byte, size int, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if n := len(chunk); n > 0 && chunk[n-1] == '\n' {
			chunk = chunk[:n-1]
		}
		size += len(chunk)
		if keep := limit + 1 - len(buf); keep > 0 {
			buf = append(buf, chunk[:min(keep, len(chunk))]...)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return buf, size, err
		}
	}
}

// rejection is the JSON-RPC error answering a message the screen refuses.
type rejection struct {
	id      json.RawMessage // nil: null
	code    int64
	message string
}

// screen decides on one line of size bytes (line holds at most limit+1 of them): nil to forward
// it, or the rejection to answer it with. A line is forwarded when it is one JSON value the
// go-sdk decodes as a JSON-RPC message (not a batch).
func screen(line []byte, size, limit int) *rejection {
	if size > limit {
		return &rejection{recoverID(line[:min(len(line), maxIDScan)]), jsonrpc.CodeInvalidRequest,
			fmt.Sprintf("the message is %d bytes, over the %d-byte limit of one MCP message on this server: send less in one call (for example a smaller guard_effect payload)", size, limit)}
	}
	msg := bytes.Trim(line, jsonSpace)
	if len(msg) == 0 {
		return nil // a blank line: nothing to answer
	}
	if !json.Valid(msg) {
		err := json.Unmarshal(msg, new(any))
		return &rejection{recoverID(msg[:min(len(msg), maxIDScan)]), jsonrpc.CodeParseError,
			fmt.Sprintf("parse error: the message is not one JSON value (%v): send one JSON-RPC message a line", err)}
	}
	if msg[0] == '[' {
		return &rejection{nil, jsonrpc.CodeInvalidRequest,
			"JSON-RPC batches are not accepted (MCP removed them in protocol 2025-06-18): send one message a line"}
	}
	if _, err := jsonrpc.DecodeMessage(msg); err != nil {
		return &rejection{recoverID(msg), jsonrpc.CodeInvalidRequest,
			fmt.Sprintf("invalid request: %v: send a JSON-RPC 2.0 message (an object with \"jsonrpc\":\"2.0\" and a method or a result)", err)}
	}
	return nil
}

// maxIDScan bounds how much of a refused line is scanned for its id.
const maxIDScan = 1 << 20

// recoverID returns the id of the JSON-RPC message msg begins (a string or a number, the value
// of a member "id" of the top-level object, read before the first syntax error or the end of
// msg), or nil.
func recoverID(msg []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(msg))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	depth, key := 1, true // key: the next token at depth 1 is a member name
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				depth++
			default:
				depth--
				if depth == 0 {
					return nil
				}
				if depth == 1 {
					key = true
				}
			}
			continue
		}
		if depth > 1 {
			continue
		}
		if !key {
			key = true
			continue
		}
		key = false
		if tok != "id" {
			continue
		}
		switch v, err := dec.Token(); id := v.(type) {
		case string:
			if err == nil {
				b, _ := json.Marshal(id)
				return b
			}
		case json.Number:
			if err == nil {
				return json.RawMessage(id)
			}
		}
		return nil
	}
}

// response is the JSON-RPC error response, one line.
func (r *rejection) response() []byte {
	id := r.id
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: r.code, Message: r.message}})
	return append(b, '\n')
}

// idText is the id as the log shows it: its JSON (5, "call-7"), cut at 64 bytes, or unknown.
func (r *rejection) idText() string {
	switch {
	case r.id == nil:
		return "unknown"
	case len(r.id) > 64:
		return string(r.id[:64]) + "..."
	}
	return string(r.id)
}
