package hookwire

import (
	"errors"
	"io"
	"strings"
)

// Ops a Request carries.
const (
	OpGuard  = "guard"  // run the guard with the request's arguments
	OpStatus = "status" // say what runs (the Result's stdout is the status, JSON)
	OpStop   = "stop"   // stop the server
	OpWarm   = "warm"   // warm the workspace Dir up in the background (hook.Warm), answered at once
)

// Kind is an Answer's kind.
type Kind byte

const (
	FallBack Kind = 'F' // nothing was done: run the full guard (Stderr says why, for logs)
	Accepted Kind = 'A' // the server is deciding; Code, Stdout, Stderr are the answer should it fail
	Result   Kind = 'R' // the answer: print Stdout, Stderr, exit with Code
)

// MaxField bounds one field: the guard reads at most barrier.MaxInputSize+1 bytes of input (64
// MiB; hookserver's tests check the two agree), and environments and arguments are far smaller.
const MaxField = 64<<20 + 1

// maxMessage bounds a whole message: a field at its largest and the rest.
const maxMessage = MaxField + 8<<20

var magic = [4]byte{'A', 'R', 'H', '1'}

// Request is one call of the client.
type Request struct {
	Op        string
	Version   string // Version() of the client's build
	Dir       string // the client's working directory
	Umask     uint32
	StdinRead bool   // Stdin holds standard input, read to its end (or to MaxField bytes)
	Stdin     []byte // standard input
	Args      []string
	Env       []string // the client's environment, as os.Environ
}

// Answer is one answer of the server.
type Answer struct {
	Kind   Kind
	Code   int
	Stdout []byte
	Stderr []byte
}

// ErrFormat reports a message that is not this format.
var ErrFormat = errors.New("hookwire: malformed message")

// AppendRequest appends r's message to b.
func AppendRequest(b []byte, r *Request) []byte {
	stdin := ""
	if r.StdinRead {
		stdin = "y"
	}
	return message(b, []byte(r.Op), []byte(r.Version), []byte(r.Dir), u32(r.Umask), []byte(stdin), r.Stdin, nulList(r.Args), nulList(r.Env))
}

// AppendAnswer appends a's message to b.
func AppendAnswer(b []byte, a *Answer) []byte {
	return message(b, []byte{byte(a.Kind)}, u32(uint32(int32(a.Code))), a.Stdout, a.Stderr)
}

// DecodeRequest decodes a Request from a message's payload.
func DecodeRequest(p []byte) (*Request, error) {
	f, err := fields(p, 8)
	if err != nil {
		return nil, err
	}
	if len(f[3]) != 4 || len(f[4]) > 1 {
		return nil, ErrFormat
	}
	args, ok1 := splitNul(f[6])
	env, ok2 := splitNul(f[7])
	if !ok1 || !ok2 {
		return nil, ErrFormat
	}
	return &Request{Op: string(f[0]), Version: string(f[1]), Dir: string(f[2]), Umask: be32(f[3]),
		StdinRead: string(f[4]) == "y", Stdin: f[5], Args: args, Env: env}, nil
}

// DecodeAnswer decodes an Answer from a message's payload.
func DecodeAnswer(p []byte) (*Answer, error) {
	f, err := fields(p, 4)
	if err != nil {
		return nil, err
	}
	if len(f[0]) != 1 || len(f[1]) != 4 {
		return nil, ErrFormat
	}
	return &Answer{Kind: Kind(f[0][0]), Code: int(int32(be32(f[1]))), Stdout: f[2], Stderr: f[3]}, nil
}

// ReadMessage reads one message from r and returns its payload. It allocates as the bytes
// arrive, so a length that lies costs no more memory than what was sent.
func ReadMessage(r io.Reader) ([]byte, error) {
	var h [8]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, err
	}
	if [4]byte(h[:4]) != magic {
		return nil, ErrFormat
	}
	n := int(be32(h[4:]))
	if n > maxMessage {
		return nil, ErrFormat
	}
	p := make([]byte, 0, min(n, 64<<10))
	for len(p) < n {
		if len(p) == cap(p) {
			p = append(p, 0)[:len(p)]
		}
		m, err := r.Read(p[len(p):min(cap(p), n)])
		p = p[:len(p)+m]
		if err != nil && len(p) < n {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
	return p, nil
}

// message appends the header and fields to b.
func message(b []byte, fs ...[]byte) []byte {
	n := 0
	for _, f := range fs {
		n += 4 + len(f)
	}
	b = append(b, magic[:]...)
	b = append(b, u32(uint32(n))...)
	for _, f := range fs {
		b = append(b, u32(uint32(len(f)))...)
		b = append(b, f...)
	}
	return b
}

// fields splits a payload into exactly n fields.
func fields(p []byte, n int) ([][]byte, error) {
	out := make([][]byte, 0, n)
	for len(p) > 0 {
		if len(p) < 4 || len(out) == n {
			return nil, ErrFormat
		}
		l := be32(p)
		p = p[4:]
		if l > MaxField || int(l) > len(p) {
			return nil, ErrFormat
		}
		out = append(out, p[:l:l])
		p = p[l:]
	}
	if len(out) != n {
		return nil, ErrFormat
	}
	return out, nil
}

func nulList(ss []string) []byte {
	var b []byte
	for _, s := range ss {
		b = append(append(b, s...), 0)
	}
	return b
}

func splitNul(b []byte) ([]string, bool) {
	if len(b) == 0 {
		return nil, true
	}
	if b[len(b)-1] != 0 {
		return nil, false
	}
	return strings.Split(string(b[:len(b)-1]), "\x00"), true
}

func u32(v uint32) []byte { return []byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)} }

func be32(b []byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// Restart is a FallBack answer's Code when the server stops (a client of another build): the
// client's full guard then starts a server of its own build.
const Restart = 1
