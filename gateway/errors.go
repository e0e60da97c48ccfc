package gateway

import (
	"errors"
	"fmt"
)

// Sentinel errors, matchable with errors.Is.
var (
	// ErrConfig: the configuration is invalid (a *ConfigError says where and what to do).
	// The gateway refuses to start.
	ErrConfig = errors.New("invalid gateway configuration")
	// ErrProfileMax: profile max was asked for. It wraps ErrConfig.
	ErrProfileMax = fmt.Errorf("%w: profile max is not available: observation retrieval and its shaping guarantees are not implemented; use lean", ErrConfig)
	// ErrSavingsCorrupt: the savings receipt exists but is not a receipt this program wrote.
	ErrSavingsCorrupt = errors.New("savings receipt unreadable")
)

// ConfigError is one invalid configuration value.
type ConfigError struct {
	// From names where the value came from: "--port", "REWIND_PORT", "gateway.json: port".
	From string
	// Problem says what is wrong and what to do.
	Problem string
	// Err is a more specific sentinel (ErrProfileMax), or nil.
	Err error
}

// Error says where the value came from, what is wrong, and what to do.
func (e *ConfigError) Error() string {
	if e.From == "" {
		return fmt.Sprintf("%v: %s", ErrConfig, e.Problem)
	}
	return fmt.Sprintf("%v: %s: %s", ErrConfig, e.From, e.Problem)
}

// Is makes errors.Is(err, ErrConfig) true, and errors.Is(err, e.Err) for the specific one.
func (e *ConfigError) Is(target error) bool {
	return target == ErrConfig || (e.Err != nil && target == e.Err)
}

func configErr(from, format string, args ...any) error {
	return &ConfigError{From: from, Problem: fmt.Sprintf(format, args...)}
}
