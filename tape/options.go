package tape

import (
	"fmt"
	"net/textproto"
	"slices"
	"time"
)

// Defaults for Options.
const (
	// DefaultMaxBody is the eligibility limit: a call whose request body or response body is
	// larger is not recorded (the gateway passes it through with a skip log line).
	DefaultMaxBody = 512 << 10
	// DefaultMaxQueue is how many tape operations may wait for their turn at once.
	DefaultMaxQueue = 64
	// DefaultUpstreamTimeout is the absolute deadline an embedding proxy gives one upstream
	// call (see [Tape.UpstreamContext]).
	DefaultUpstreamTimeout = 120 * time.Second
	// DefaultBusyTimeout is how long an operation waits for another process's SQLite
	// transaction on the same database before failing with ErrConflict.
	DefaultBusyTimeout = 5 * time.Second
)

// Options configure a Tape. The zero value of every field but Dir and Tenant means its default.
type Options struct {
	// Dir is the storage directory; a tenant's database is Dir/<tenant>/tape.db. The gateway
	// passes .rewind/storage by default. Required.
	Dir string
	// Tenant names the store (see [ValidateName]). Required.
	Tenant string
	// Key is the 32-byte storage key. When nil, the key is read from REWIND_STORAGE_KEY with
	// [KeyFromEnv]. It is for embedders that hold the key some other way; never fill it from a
	// command-line argument or a configuration file.
	Key []byte
	// MaxBody is the largest request body and the largest response body that Record accepts;
	// 0 means DefaultMaxBody (512 KiB).
	MaxBody int
	// MaxQueue is how many operations on this Tape may wait while another runs; one more gets
	// ErrQueueFull. 0 means DefaultMaxQueue (64).
	MaxQueue int
	// UpstreamTimeout is carried for the embedding proxy, which applies it to each upstream
	// call with [Tape.UpstreamContext]; the tape itself never calls upstream. 0 means
	// DefaultUpstreamTimeout (120 s).
	UpstreamTimeout time.Duration
	// BusyTimeout bounds the wait for another process's transaction on the same database;
	// 0 means DefaultBusyTimeout (5 s).
	BusyTimeout time.Duration
	// AnswerHeaders are the request headers that change the answer: they are stored and they
	// take part in the request hash. nil means DefaultAnswerHeaders. Credential headers
	// (Authorization, X-Api-Key, ...) are refused. Recording and replay must use the same list,
	// or every replayed request misses.
	AnswerHeaders []string
}

// withDefaults validates o and fills in defaults.
func (o Options) withDefaults() (Options, error) {
	if o.Dir == "" {
		return o, fmt.Errorf("%w: Options.Dir is empty: give the storage directory (the gateway's default is .rewind/storage)", ErrInvalid)
	}
	if err := ValidateName("tenant", o.Tenant); err != nil {
		return o, err
	}
	for _, f := range []struct {
		name string
		v    int64
	}{{"MaxBody", int64(o.MaxBody)}, {"MaxQueue", int64(o.MaxQueue)}, {"UpstreamTimeout", int64(o.UpstreamTimeout)}, {"BusyTimeout", int64(o.BusyTimeout)}} {
		if f.v < 0 {
			return o, fmt.Errorf("%w: Options.%s is negative (%d): use 0 for the default or a positive value", ErrInvalid, f.name, f.v)
		}
	}
	if o.MaxBody == 0 {
		o.MaxBody = DefaultMaxBody
	}
	if o.MaxBody > 1<<30 {
		return o, fmt.Errorf("%w: Options.MaxBody is %d bytes; the tape records at most 1 GiB per body", ErrInvalid, o.MaxBody)
	}
	if o.MaxQueue == 0 {
		o.MaxQueue = DefaultMaxQueue
	}
	if o.UpstreamTimeout == 0 {
		o.UpstreamTimeout = DefaultUpstreamTimeout
	}
	if o.BusyTimeout == 0 {
		o.BusyTimeout = DefaultBusyTimeout
	}
	if o.AnswerHeaders == nil {
		o.AnswerHeaders = DefaultAnswerHeaders
	}
	o.AnswerHeaders = canonicalNames(o.AnswerHeaders)
	for _, h := range o.AnswerHeaders {
		if slices.Contains(credentialHeaders, h) {
			return o, fmt.Errorf("%w: Options.AnswerHeaders lists %s, a credential header: the tape never stores credentials; remove it", ErrInvalid, h)
		}
	}
	if o.Key != nil {
		o.Key = slices.Clone(o.Key)
	}
	return o, nil
}

func canonicalNames(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = textproto.CanonicalMIMEHeaderKey(n)
	}
	return out
}
