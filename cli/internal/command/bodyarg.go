package command

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/agent-rewind/rewind/internal/regular"
)

// MaxBodyBytes bounds a request body given to cache-report or prune: the provider's own
// request size limit is 32 MB.
const MaxBodyBytes = 32 << 20

// readBodyArg reads a request body given as literal JSON, "@path" for a file, or "-" for
// standard input, at most max bytes.
func readBodyArg(env *Env, arg string, max int64) ([]byte, error) {
	var r io.Reader
	what := "the request argument"
	switch {
	case arg == "-":
		r, what = env.Stdin, "standard input"
	case strings.HasPrefix(arg, "@"):
		f, err := regular.OpenInput(arg[1:])
		if err != nil {
			return nil, fmt.Errorf("cannot open %s: %w; give @PATH to a readable file, - for standard input, or the JSON itself", arg, osReason(err))
		}
		defer f.Close()
		r, what = f, arg
	default:
		if int64(len(arg)) > max {
			return nil, fmt.Errorf("the request argument is %d bytes, over the %d-byte limit", len(arg), max)
		}
		return []byte(arg), nil
	}
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", what, osReason(err))
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s is over the %d-byte limit for one request body", what, max)
	}
	return data, nil
}

// osReason strips the path from an *fs.PathError: callers say which input it was themselves.
func osReason(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
