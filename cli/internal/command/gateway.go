package command

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/agent-rewind/rewind/cli/internal/workspace"
	"github.com/agent-rewind/rewind/gateway"
	"github.com/alecthomas/kong"
)

// GatewayCmd runs the token-saving reverse proxy in front of the Anthropic and OpenAI APIs.
//
// The fields give kong the flags (for --help and for rejecting unknown ones); their values
// are not used: gateway.ScanFlags reads the flags from the command line as typed, so that a
// flag given twice or a conflicting pair fails instead of the last one silently winning.
type GatewayCmd struct {
	Port             string `placeholder:"N" help:"Port to listen on (default 8788; 0 picks a free one)."`
	Host             string `placeholder:"ADDR" help:"Address to listen on (default 127.0.0.1). Anything but a loopback address needs --allow-remote."`
	AllowRemote      bool   `name:"allow-remote" help:"Allow a non-loopback --host: the gateway authenticates nobody."`
	Upstream         string `placeholder:"URL" help:"The provider's base URL, http(s) with a root path (default https://api.anthropic.com)."`
	Profile          string `placeholder:"compat|lean|max" help:"compat (default) forwards bodies byte for byte; lean adds cache preservation; max is not available."`
	Tenant           string `placeholder:"ID" help:"The tenant this process serves (default \"default\"); never taken from a header."`
	PreserveCache    bool   `name:"preserve-cache" negatable:"" help:"Add an Anthropic prompt-cache breakpoint when the client supplied none (on in lean)."`
	PruneContext     bool   `name:"prune-context" negatable:"" help:"Replace repeated identical tool results with references (changes what the model sees)."`
	Config           string `placeholder:"PATH" help:"JSON configuration file (else REWIND_CONFIG)."`
	Storage          string `placeholder:"memory|sqlite|postgres" help:"memory (default): replay from memory; sqlite: the durable, encrypted, ordered tape (key in REWIND_STORAGE_KEY); postgres: a team gateway, replays and tapes shared by every replica (REWIND_DATABASE_URL, REWIND_DEPLOYMENT_KEY, API keys)."`
	TLSCert          string `name:"tls-cert" placeholder:"PEM" help:"Serve HTTPS with this certificate (with --tls-key); a team gateway on a non-loopback --host needs it."`
	TLSKey           string `name:"tls-key" placeholder:"PEM" help:"The TLS certificate's private key."`
	MetricsListen    string `name:"metrics-listen" placeholder:"HOST:PORT" help:"Serve Prometheus metrics at http://HOST:PORT/metrics, apart from the proxy's port."`
	StorageDirectory string `name:"storage-directory" placeholder:"DIR" help:"Tape directory (default: storage/ in the workspace's store; agent-rewind store prints where)."`
	Epoch            string `placeholder:"E" help:"Tape epoch to record or replay (default \"default\")."`
	ReplayCursor     string `name:"replay-cursor" placeholder:"C" help:"Replay the epoch in order under this cursor name instead of recording."`
	RecordOnly       bool   `name:"record-only" help:"Record live calls, clearing a replay cursor inherited from the file or the environment."`
}

// Run resolves the configuration (flags, environment, file, profile, defaults), prints it
// and the mechanisms' limits to stderr, then the listening address, and serves until
// SIGINT or SIGTERM.
func (c *GatewayCmd) Run(env *Env, kctx *kong.Context) error {
	flags, err := gateway.ScanFlags(kctx.Args)
	if err != nil {
		return err
	}
	root, err := env.root()
	if err != nil {
		return err
	}
	cfg, err := gateway.Resolve(gateway.Layers{Flags: flags, LookupEnv: os.LookupEnv, Workspace: root})
	if err != nil {
		return err
	}
	// The store lives outside the workspace, so making it now changes nothing in the workspace;
	// its path is needed before the first write.
	ws, err := workspace.Init(root)
	if err != nil {
		return err
	}
	ws.Close()
	cfg.SavingsFile = ws.Path(gateway.SavingsFileName)
	if cfg.StorageDirectory.Source == gateway.SourceDefault {
		cfg.StorageDirectory.Value = ws.Path("storage")
	}
	cfg.Log = env.Stderr
	g, err := gateway.New(cfg)
	if err != nil {
		return err
	}
	defer g.Close()
	if err := cfg.WriteBanner(env.Stderr); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(cfg.Host.Value, strconv.Itoa(cfg.Port.Value)))
	if err != nil {
		return fmt.Errorf("listen on %s port %d: %w: choose another --port, or stop what uses it", cfg.Host.Value, cfg.Port.Value, err)
	}
	scheme := "http"
	if cfg.TLSCert.Value != "" {
		scheme = "https"
	}
	// Signals are caught before the address is printed: a supervisor that stops the gateway
	// as soon as it has read the address must get a clean stop, not the default kill.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Fprintf(env.Stderr, "agent-rewind gateway: listening on %s://%s\n", scheme, ln.Addr())
	if env.JSON {
		// One line on stdout, for a program that starts the gateway and reads where it
		// listens and what each mechanism covers.
		b, _ := json.Marshal(cfg.Startup(scheme + "://" + ln.Addr().String()))
		fmt.Fprintf(env.Stdout, "%s\n", b)
	}
	if addr := cfg.MetricsListen.Value; addr != "" {
		mln, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("listen for metrics on %s: %w: choose another --metrics-listen", addr, err)
		}
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", g.MetricsHandler())
		msrv := &http.Server{Handler: mux, ReadHeaderTimeout: gateway.ReadHeaderTimeout}
		go msrv.Serve(mln)
		defer msrv.Close()
		fmt.Fprintf(env.Stderr, "agent-rewind gateway: metrics on http://%s/metrics\n", mln.Addr())
	}
	if err := g.Serve(ctx, ln); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if err := g.Close(); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	fmt.Fprintln(env.Stderr, "agent-rewind gateway: stopped")
	return nil
}
