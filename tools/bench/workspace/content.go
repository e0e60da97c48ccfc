package workspace

import (
	"bufio"
	"encoding/binary"
	"io"
	"strconv"
)

// writeText writes f's text content: a unique header line, then code-like lines of words drawn
// from a fixed vocabulary, cut to exactly f.size bytes. Text compresses as source code does,
// which matters for the shadow-git baseline (git zlib-compresses every object).
func writeText(w *bufio.Writer, f file, index int) error {
	r := splitmix{s: f.seed}
	var line []byte
	if f.exec {
		line = append(line, "#!/bin/sh\n"...)
	}
	line = append(line, "# generated file "...)
	line = strconv.AppendInt(line, int64(index), 10)
	line = append(line, " "...)
	line = strconv.AppendUint(line, f.seed, 16)
	line = append(line, '\n')
	left := f.size
	for left > 0 {
		if int64(len(line)) >= left {
			_, err := w.Write(line[:left])
			return err
		}
		if _, err := w.Write(line); err != nil {
			return err
		}
		left -= int64(len(line))
		line = line[:0]
		// One draw gives the indent and up to seven 8-bit word picks.
		v := r.next()
		for range v & 3 {
			line = append(line, '\t')
		}
		n := 3 + int(v>>2&3)
		v >>= 8
		for k := range n {
			if k > 0 {
				line = append(line, ' ')
			}
			line = append(line, vocabulary[v&0xff]...)
			v >>= 8
		}
		line = append(line, '\n')
	}
	return nil
}

// writeBinary writes f.size incompressible bytes from f's own stream.
func writeBinary(w io.Writer, f file) error {
	r := splitmix{s: f.seed}
	var buf [32 << 10]byte
	left := f.size
	for left > 0 {
		n := min(int64(len(buf)), left)
		i := 0
		for ; i+8 <= int(n); i += 8 {
			binary.LittleEndian.PutUint64(buf[i:], r.next())
		}
		if i < int(n) {
			var word [8]byte
			binary.LittleEndian.PutUint64(word[:], r.next())
			copy(buf[i:n], word[:])
		}
		if _, err := w.Write(buf[:n]); err != nil {
			return err
		}
		left -= n
	}
	return nil
}

// vocabulary is 256 tokens of the kind source files are made of.
var vocabulary = func() [256]string {
	words := []string{
		"func", "return", "if", "else", "for", "range", "var", "const", "type", "struct", "interface", "map",
		"string", "int", "int64", "bool", "error", "nil", "true", "false", "err", "ctx", "context.Context",
		"import", "package", "export", "default", "class", "def", "self", "async", "await", "let", "fn",
		"pub", "impl", "match", "Some", "None", "Ok", "Err", "println!", "console.log", "print", "len",
		"append", "make", "new", "delete", "copy", "panic", "defer", "go", "select", "case", "switch",
		"break", "continue", "goto", "fallthrough", "{", "}", "(", ")", "[", "]", ":=", "=", "==", "!=",
		"<", ">", "<=", ">=", "&&", "||", "!", "+", "-", "*", "/", "%", "+=", "-=", "++", "--", "=>",
		"->", "::", ".", ",", ";", ":", "0", "1", "2", "10", "100", "0x1f", "\"\"", "\"ok\"", "'a'",
		"user", "order", "payment", "invoice", "config", "options", "request", "response", "handler",
		"server", "client", "session", "token", "cache", "queue", "worker", "result", "value", "key",
		"name", "id", "count", "total", "index", "offset", "limit", "buffer", "reader", "writer",
		"path", "file", "dir", "root", "node", "tree", "list", "items", "item", "entry", "record",
		"state", "status", "event", "message", "payload", "body", "header", "query", "params",
		"args", "opts", "data", "info", "meta", "schema", "model", "view", "store", "router",
		"render", "parse", "format", "encode", "decode", "marshal", "unmarshal", "validate",
		"check", "load", "save", "open", "close", "read", "write", "flush", "sync", "lock",
		"unlock", "start", "stop", "run", "wait", "done", "cancel", "timeout", "retry", "backoff",
		"log", "debug", "warn", "fatal", "trace", "metrics", "span", "test", "assert", "expect",
		"mock", "fixture", "setup", "teardown", "before", "after", "describe", "it", "should",
		"TODO:", "FIXME:", "NOTE:", "//", "#", "/*", "*/", "<div>", "</div>", "<span>", "</span>",
		"className", "props", "children", "useState", "useEffect", "onClick", "onChange",
		"margin:", "padding:", "color:", "display:", "flex;", "none;", "auto;", "px;", "em;",
		"SELECT", "FROM", "WHERE", "INSERT", "UPDATE", "JOIN", "ORDER", "BY", "GROUP", "LIMIT",
		"http", "https", "url", "api", "v1", "v2", "json", "yaml", "toml", "env", "prod", "dev",
	}
	var v [256]string
	for i := range v {
		v[i] = words[i%len(words)]
	}
	return v
}()
