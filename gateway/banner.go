package gateway

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/agent-rewind/rewind/tape/pgtape"
)

// WriteBanner writes the startup banner: every setting with its value and where it came
// from, then what each mechanism does and does not do in this configuration. The listening
// address is printed after it, by whoever listens.
func (c *Config) WriteBanner(w io.Writer) error {
	var b strings.Builder
	b.WriteString("agent-rewind gateway: configuration (value, then where it came from)\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	row := func(name, value string, src Source, from string) {
		where := string(src)
		if from != "" && from != string(src) {
			where += " " + from
		}
		fmt.Fprintf(tw, "  %s\t%s\t(%s)\n", name, value, where)
	}
	quoted := func(s string) string {
		if s == "" {
			return "(none)"
		}
		return s
	}
	row("profile", string(c.Profile.Value), c.Profile.Source, c.Profile.From)
	row("listen", c.Host.Value, c.Host.Source, c.Host.From)
	row("port", fmt.Sprint(c.Port.Value), c.Port.Source, c.Port.From)
	row("allow-remote", fmt.Sprint(c.AllowRemote.Value), c.AllowRemote.Source, c.AllowRemote.From)
	row("upstream", c.Upstream.Value, c.Upstream.Source, c.Upstream.From)
	row("preserve-cache", fmt.Sprint(c.PreserveCache.Value), c.PreserveCache.Source, c.PreserveCache.From)
	row("prune-context", fmt.Sprint(c.PruneContext.Value), c.PruneContext.Source, c.PruneContext.From)
	row("tenant", c.Tenant.Value, c.Tenant.Source, c.Tenant.From)
	row("storage", string(c.Storage.Value), c.Storage.Source, c.Storage.From)
	if c.Storage.Value == StorageSQLite {
		row("storage-directory", c.StorageDirectory.Value, c.StorageDirectory.Source, c.StorageDirectory.From)
		row("epoch", c.Epoch.Value, c.Epoch.Source, c.Epoch.From)
		row("replay-cursor", quoted(c.ReplayCursor.Value), c.ReplayCursor.Source, c.ReplayCursor.From)
		row("record-only", fmt.Sprint(c.RecordOnly.Value), c.RecordOnly.Source, c.RecordOnly.From)
	}
	if c.Storage.Value == StoragePostgres {
		row("database", pgtape.Redact(c.DatabaseURL.Value), c.DatabaseURL.Source, c.DatabaseURL.From)
		row("epoch", c.Epoch.Value, c.Epoch.Source, c.Epoch.From)
		row("replay-cursor", quoted(c.ReplayCursor.Value), c.ReplayCursor.Source, c.ReplayCursor.From)
	}
	if c.TLSCert.Value != "" {
		row("tls-cert", c.TLSCert.Value, c.TLSCert.Source, c.TLSCert.From)
		row("tls-key", c.TLSKey.Value, c.TLSKey.Source, c.TLSKey.From)
	}
	if c.MetricsListen.Value != "" {
		row("metrics-listen", c.MetricsListen.Value, c.MetricsListen.Source, c.MetricsListen.From)
	}
	row("config", quoted(c.ConfigFile.Value), c.ConfigFile.Source, c.ConfigFile.From)
	row("prices", fmt.Sprintf("%d models, %s", len(c.Prices.Value), PriceDate), c.Prices.Source, c.Prices.From)
	tw.Flush()

	b.WriteString("agent-rewind gateway: what each mechanism does here, and does not do\n")
	line := func(format string, args ...any) { fmt.Fprintf(&b, "  - "+format+"\n", args...) }
	for _, m := range c.Mechanisms() {
		line("%s [APIs: %s]", m.Text, apiList(m.APIs))
	}
	if c.Storage.Value == StoragePostgres {
		line("tenancy: the tenant comes from the caller's API key (x-rewind-key; agent-rewind gateway keys create --tenant T), checked against the database on every request, so a revoked key is refused at once by every replica; x-rewind-scope selects a subordinate scope; every x-rewind-* header, the key included, is stripped before the upstream; the provider's credential travels in the request")
	} else {
		line("tenancy: tenant %q from configuration only; x-rewind-scope selects a subordinate scope (1 to 128 of A-Z a-z 0-9 . _ : -), anything else gets 403; every x-rewind-* header is stripped before the upstream; run one process and one store per tenant", c.Tenant.Value)
	}
	if c.TLSCert.Value != "" {
		line("access: HTTPS on %s with API keys", c.Host.Value)
	} else if isLoopback(c.Host.Value) {
		line("access: loopback only; this is not a remotely authenticated service")
	} else {
		line("access: REMOTE connections accepted on %s (--allow-remote): the gateway authenticates nobody; anyone who reaches it can spend the credentials they send", c.Host.Value)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Mechanism is one of the gateway's mechanisms as the banner and `gateway --json` describe it:
// whether it is on in this configuration, which APIs it covers, and what it does and does not.
type Mechanism struct {
	Name string `json:"name"` // exact-replay, tape, cache-preservation, pruning, savings-receipt
	On   bool   `json:"on"`
	APIs []API  `json:"apis"` // the APIs it applies to; calls of others pass through
	Text string `json:"text"` // the banner's sentence
}

// apiCalls names the calls every API-wide mechanism understands.
const apiCalls = "POST /v1/messages, /v1/responses or /v1/chat/completions"

// neverReplayed is the never-replay rule as the banner states it (bypassReason).
const neverReplayed = "never replayed, forwarded every time (X-Rewind-Bypass says why): a Responses call without \"store\": false (the API stores it), with previous_response_id, conversation or \"background\": true, and a Chat call with \"store\": true"

// Mechanisms lists the gateway's mechanisms in this configuration.
func (c *Config) Mechanisms() []Mechanism {
	quoted := func(s string) string {
		if s == "" {
			return "(none)"
		}
		return s
	}
	var ms []Mechanism
	add := func(name string, on bool, apis []API, format string, args ...any) {
		ms = append(ms, Mechanism{Name: name, On: on, APIs: apis, Text: fmt.Sprintf(format, args...)})
	}
	switch {
	case c.Storage.Value == StoragePostgres && c.teamTape():
		add("tape", true, APIs, "team tape (PostgreSQL, shared by every replica): epoch %q, cursor %s: every %s of the caller's tenant (from its API key); positions are ordered by the database across replicas; storage failures answer 503 with Retry-After, never an unrecorded paid call; a background response is never on the tape", c.Epoch.Value, quoted(c.ReplayCursor.Value), apiCalls)
		add("exact-replay", false, APIs, "exact replay: off (the tape records every occurrence)")
	case c.Storage.Value == StoragePostgres:
		add("exact-replay", true, APIs, "team replay (PostgreSQL, shared by every replica, encrypted under per-tenant keys; memory is a bounded cache in front): a repeated %s from the same tenant, scope and credential is answered without an upstream call; a database that does not answer gives 503 with Retry-After before any paid call; %s", apiCalls, neverReplayed)
	case c.Storage.Value == StorageSQLite && c.ReplayCursor.Value != "":
		add("tape", true, APIs, "durable tape: REPLAY of epoch %q with cursor %q: every %s is answered from the tape in recorded order (a request that does not match the recording gets 409, storage failures 503, never a paid upstream call); x-rewind-request-id makes a retry return the same response; GET and HEAD (and count_tokens, input_tokens) still reach the upstream; other calls, and background responses, are refused", c.Epoch.Value, c.ReplayCursor.Value, apiCalls)
		add("exact-replay", false, APIs, "exact replay from memory: off (the tape answers)")
	case c.Storage.Value == StorageSQLite:
		add("tape", true, APIs, "durable tape: RECORD into epoch %q: every eligible %s is appended in order, identical requests included, and held until it is committed (this delays the first byte); requests or responses over 512 KiB, and background responses, pass through unrecorded, with a log line; tape exchanges are serialised, at most 64 waiting (then 503 with Retry-After); each upstream call has an absolute 120 s deadline", c.Epoch.Value, apiCalls)
		add("exact-replay", false, APIs, "exact replay from memory: off (the tape records every occurrence)")
	default:
		add("exact-replay", true, APIs, "exact replay from memory: on: a repeated %s (same method, path, canonical JSON body, anthropic-version, anthropic-beta, openai-beta, openai-organization and openai-project, tenant, scope and credential) is answered from memory without an upstream call, byte for byte; only complete successful responses are recorded; identical requests in flight together cost one upstream call; %s. Records are kept in memory only (at most 64 MiB, oldest dropped first) and are CLEARED ON RESTART", apiCalls, neverReplayed)
	}
	anthropic := []API{APIMessages}
	if c.PreserveCache.Value {
		add("cache-preservation", true, anthropic, "cache preservation: on: adds one Anthropic prompt-cache breakpoint (two for a long agent turn) when the client supplied none; OpenAI calls are forwarded unchanged (OpenAI caches a stable prefix by itself: agent-rewind cache-report shows where it breaks); the provider's policy and usage decide the actual saving")
	} else {
		add("cache-preservation", false, anthropic, "cache preservation: off: request bodies are not given cache breakpoints")
	}
	switch {
	case c.PruneContext.Value:
		add("pruning", true, APIs, "pruning: on: repeated identical tool outputs (Anthropic tool_result contents, Responses function_call_output and custom_tool_call_output items, Chat tool messages) become references to the first one; this changes what the model sees; a smaller request is not necessarily a smaller bill")
	case !c.PreserveCache.Value:
		add("pruning", false, APIs, "pruning: off: request bodies are forwarded byte for byte")
	default:
		add("pruning", false, APIs, "pruning: off (opt-in with --prune-context: it changes what the model sees)")
	}
	receipt := c.SavingsFile
	if receipt == "" {
		receipt = "none (no file configured)"
	}
	if c.Storage.Value == StoragePostgres {
		receipt = "the fleet's receipt in the database"
	}
	add("savings-receipt", c.SavingsFile != "" || c.Storage.Value == StoragePostgres, APIs, "savings receipt: %s counts replay savings only (memory replays priced from each response's usage, OpenAI's cached and reasoning tokens included, with the table of %s); cache preservation, pruning and tape replay are not counted", receipt, PriceDate)
	return ms
}

func apiList(apis []API) string {
	s := make([]string, len(apis))
	for i, a := range apis {
		s[i] = string(a)
	}
	return strings.Join(s, ", ")
}

// StartupKind names the shape of Startup.
const StartupKind = "agent-rewind/gateway-start/v1"

// Startup is what `agent-rewind gateway --json` writes to standard output, one line, once it
// listens: where, which APIs it understands (every other request passes through), and each
// mechanism with the APIs it covers.
type Startup struct {
	Kind       string      `json:"kind"`
	Listen     string      `json:"listen"` // the base URL, "http://127.0.0.1:8788"
	APIs       []APIPath   `json:"apis"`
	Mechanisms []Mechanism `json:"mechanisms"`
}

// APIPath is one understood API and the path it is called on.
type APIPath struct {
	API  API    `json:"api"`
	Path string `json:"path"`
}

// Startup describes this configuration listening at listen.
func (c *Config) Startup(listen string) Startup {
	s := Startup{Kind: StartupKind, Listen: listen, Mechanisms: c.Mechanisms()}
	for _, a := range APIs {
		s.APIs = append(s.APIs, APIPath{a, "POST " + a.Path()})
	}
	return s
}
