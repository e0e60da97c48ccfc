package gateway

import (
	"fmt"
	"io"
	"net/http"
	"time"
)

// Source says which configuration layer a setting's value came from. Layers are applied in
// this order, each overriding the ones before: default, profile, file, env, flag.
type Source string

// The configuration layers.
const (
	SourceDefault Source = "default" // the built-in default
	SourceProfile Source = "profile" // implied by the active profile (lean turns on cache preservation)
	SourceFile    Source = "file"    // the JSON configuration file (--config or REWIND_CONFIG)
	SourceEnv     Source = "env"     // a REWIND_* environment variable
	SourceFlag    Source = "flag"    // a command-line flag
)

// Setting is one configuration value and where it came from.
type Setting[T any] struct {
	Value T
	// Source is the layer that set Value.
	Source Source
	// From names the exact place: "--port", "REWIND_PORT", "/path/gateway.json: port", or the
	// profile ("lean") for a profile default.
	From string
}

func (s *Setting[T]) set(v T, src Source, from string) {
	s.Value, s.Source, s.From = v, src, from
}

// Profile selects the request-body mechanisms that are on by default.
type Profile string

// The profiles.
const (
	// ProfileCompat forwards request bodies byte for byte (the default).
	ProfileCompat Profile = "compat"
	// ProfileLean turns on cache preservation.
	ProfileLean Profile = "lean"
	// ProfileMax is refused at startup: see ErrProfileMax.
	ProfileMax Profile = "max"
)

// Storage selects where exact record/replay keeps its records.
type Storage string

// The storage modes.
const (
	// StorageMemory: memory replay; records live in this process and are cleared on restart.
	StorageMemory Storage = "memory"
	// StorageSQLite: the durable, encrypted, ordered tape (the tape module).
	StorageSQLite Storage = "sqlite"
	// StoragePostgres: team mode. Replays and tapes live in PostgreSQL (tape/pgtape), shared by
	// every replica, encrypted under per-tenant keys; callers authenticate with API keys and
	// the tenant comes from the key.
	StoragePostgres Storage = "postgres"
)

// Defaults.
const (
	DefaultHost     = "127.0.0.1"
	DefaultPort     = 8788
	DefaultUpstream = "https://api.anthropic.com"
	DefaultTenant   = "default"
	DefaultEpoch    = "default"
	// DefaultStorageDirectory is relative to the workspace root (agent-rewind replaces it with
	// storage/ in the workspace's store, outside the workspace).
	DefaultStorageDirectory = ".rewind/storage"
	// DefaultUpstreamTimeout is the absolute deadline of one tape exchange's upstream call.
	DefaultUpstreamTimeout = 120 * time.Second
)

// Config is the gateway's configuration: the layered settings that Resolve produces (each
// with its source, for the startup banner), and the run-time fields the embedding program
// fills in.
type Config struct {
	Profile Setting[Profile]
	// Host is the address to listen on; anything but a loopback address needs AllowRemote.
	Host Setting[string]
	// Port to listen on; 0 picks a free port.
	Port Setting[int]
	// AllowRemote permits a non-loopback Host (flag only: --allow-remote).
	AllowRemote Setting[bool]
	// Upstream is the provider's base URL: http or https, a host, a root path, nothing else.
	Upstream         Setting[string]
	PreserveCache    Setting[bool]
	PruneContext     Setting[bool]
	Tenant           Setting[string]
	Storage          Setting[Storage]
	StorageDirectory Setting[string]
	Epoch            Setting[string]
	ReplayCursor     Setting[string]
	// DatabaseURL is the PostgreSQL connection string of --storage postgres (REWIND_DATABASE_URL
	// or the file's databaseUrl; never a flag, so it stays out of process listings). The banner
	// prints it without its password.
	DatabaseURL Setting[string]
	// TLSCert and TLSKey are PEM files: with both, the gateway serves HTTPS. A non-loopback
	// Host in team mode needs them.
	TLSCert Setting[string]
	TLSKey  Setting[string]
	// MetricsListen is the address (host:port) of the metrics listener, "" for none: the
	// embedding program serves Gateway.MetricsHandler there, apart from the proxy's port.
	MetricsListen Setting[string]
	// RecordOnly (flag only) records without a cursor, clearing one inherited from the file
	// or the environment.
	RecordOnly Setting[bool]
	// ConfigFile is the file read (from --config or REWIND_CONFIG), "" for none.
	ConfigFile Setting[string]
	// Prices prices avoided calls for the savings receipt: DefaultPrices, with the file's
	// "prices" entries replacing or adding models.
	Prices Setting[PriceTable]

	// Run-time fields, not from the layers.

	// SavingsFile is where the savings receipt is kept (agent-rewind: savings.json in the store);
	// "" disables the receipt.
	SavingsFile string
	// Prepare, when set, is called once before the gateway first writes under the
	// workspace's state directory (the savings receipt, the default tape directory), so that
	// the embedding program can create .rewind/ its own way. The gateway creates nothing
	// there until it has something to write.
	Prepare func() error
	// DeploymentKey is team mode's deployment key (32 bytes); nil reads REWIND_DEPLOYMENT_KEY.
	// Every tenant's storage key and the replay key's credential MAC key are derived from it,
	// so it must be the same on every replica.
	DeploymentKey []byte
	// StorageKey is the tape key; nil reads REWIND_STORAGE_KEY (see the tape module).
	StorageKey []byte
	// UpstreamTimeout is the absolute deadline of a tape exchange's upstream call (0:
	// DefaultUpstreamTimeout). Pass-through and memory-mode calls have none: a long
	// generation may stream for many minutes; a client disconnect cancels them.
	UpstreamTimeout time.Duration
	// DrainTimeout is how long Serve lets requests in progress finish after its context ends
	// (0: ShutdownGrace).
	DrainTimeout time.Duration
	// Log receives one line per notable event (an oversized call passed through unrecorded,
	// a savings write that failed); nil discards them.
	Log io.Writer
	// Transport carries upstream calls; nil uses a tuned http.Transport.
	Transport http.RoundTripper
}

// String is the setting's value as the banner prints it.
func (s Setting[T]) String() string { return fmt.Sprint(s.Value) }
