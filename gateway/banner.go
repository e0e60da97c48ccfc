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
	switch {
	case c.Storage.Value == StoragePostgres && c.teamTape():
		line("team tape (PostgreSQL, shared by every replica): epoch %q, cursor %s: the caller's tenant comes from its API key; positions are ordered by the database across replicas; storage failures answer 503 with Retry-After, never an unrecorded paid call", c.Epoch.Value, quoted(c.ReplayCursor.Value))
	case c.Storage.Value == StoragePostgres:
		line("team replay (PostgreSQL, shared by every replica, encrypted under per-tenant keys; memory is a bounded cache in front): a repeated POST /v1/messages from the same tenant, scope and credential is answered without an upstream call; a database that does not answer gives 503 with Retry-After before any paid call")
	case c.Storage.Value == StorageSQLite && c.ReplayCursor.Value != "":
		line("durable tape: REPLAY of epoch %q with cursor %q: POST /v1/messages is answered from the tape in recorded order (a request that does not match the recording gets 409, storage failures 503, never a paid upstream call); x-rewind-request-id makes a retry return the same response; GET and HEAD (and count_tokens) still reach the upstream; other calls are refused", c.Epoch.Value, c.ReplayCursor.Value)
	case c.Storage.Value == StorageSQLite:
		line("durable tape: RECORD into epoch %q: every eligible POST /v1/messages is appended in order, identical requests included, and held until it is committed (this delays the first byte); requests or responses over 512 KiB pass through unrecorded, with a log line; tape exchanges are serialised, at most 64 waiting (then 503 with Retry-After); each upstream call has an absolute 120 s deadline", c.Epoch.Value)
		line("exact replay from memory: off (the tape records every occurrence)")
	default:
		line("exact replay from memory: on: a repeated POST /v1/messages (same method, path, canonical JSON body, anthropic-version and anthropic-beta, tenant, scope and credential) is answered from memory without an upstream call, byte for byte; only complete successful responses are recorded; identical requests in flight together cost one upstream call. Records are kept in memory only (at most 64 MiB, oldest dropped first) and are CLEARED ON RESTART")
	}
	if c.PreserveCache.Value {
		line("cache preservation: on: adds one Anthropic prompt-cache breakpoint (two for a long agent turn) when the client supplied none; other request formats are skipped and forwarded unchanged; the provider's policy and usage decide the actual saving")
	} else {
		line("cache preservation: off: request bodies are not given cache breakpoints")
	}
	if c.PruneContext.Value {
		line("pruning: on: repeated identical Anthropic tool_result contents become references to the first one; this changes what the model sees; other formats are skipped; a smaller request is not necessarily a smaller bill")
	} else if !c.PreserveCache.Value {
		line("pruning: off: request bodies are forwarded byte for byte")
	} else {
		line("pruning: off (opt-in with --prune-context: it changes what the model sees)")
	}
	receipt := c.SavingsFile
	if receipt == "" {
		receipt = "none (no file configured)"
	}
	line("savings receipt: %s counts replay savings only (memory replays priced with the table of %s); cache preservation, pruning and tape replay are not counted", receipt, PriceDate)
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
