package cacheplan

import (
	"errors"
	"fmt"

	"github.com/agent-rewind/rewind/internal/jsonscan"
)

// Errors returned by this package, matchable with errors.Is. Their messages never quote the
// input: a body is a prompt.
var (
	// ErrInvalidJSON: the body is not one valid JSON value. The wrapped *SyntaxError has the
	// byte offset.
	ErrInvalidJSON = errors.New("the request body is not valid JSON")
	// ErrUnsupportedFormat: the body is JSON but not a request body of a supported API, or
	// not of the one the caller named (Compare; PlanRequest and Prune report it in their
	// results instead), or two compared bodies are for different APIs.
	ErrUnsupportedFormat = errors.New("not a request body this package reads")
	// ErrNotUTF8: the input is not valid UTF-8.
	ErrNotUTF8 = errors.New("the input is not valid UTF-8")
	// ErrInvalidTTL: Options.TTL is neither "", "5m" nor "1h".
	ErrInvalidTTL = errors.New(`invalid cache TTL: use "5m" or "1h"`)
)

// SyntaxError is a JSON syntax error at a byte offset, with a fixed description.
type SyntaxError struct {
	Offset int
	What   string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%v (at byte %d: %s)", ErrInvalidJSON, e.Offset, e.What)
}

// Unwrap makes a *SyntaxError match ErrInvalidJSON.
func (e *SyntaxError) Unwrap() error { return ErrInvalidJSON }

// syntaxError converts the scanner's error.
func syntaxError(err error) error {
	var se *jsonscan.Error
	if errors.As(err, &se) {
		return &SyntaxError{Offset: se.Offset, What: se.What}
	}
	return fmt.Errorf("%w: %v", ErrInvalidJSON, err)
}
