package gateway

import (
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/agent-rewind/rewind/tape"
	"github.com/agent-rewind/rewind/tape/pgtape"
)

// EnvConfig names the configuration file when --config is not given.
const EnvConfig = "REWIND_CONFIG"

// Layers are what Resolve builds a Config from.
type Layers struct {
	// Flags are the gateway flags given on the command line (see ScanFlags).
	Flags map[string]FlagValue
	// LookupEnv reads the environment (os.LookupEnv); nil means an empty environment.
	LookupEnv func(string) (string, bool)
	// Workspace is the workspace root: the default storage directory is under it.
	Workspace string
	// Dir resolves relative paths given by a flag or the environment; "" is the current
	// directory. A relative storageDirectory in the file is relative to the file's folder.
	Dir string
}

type valueKind uint8

const (
	kindString valueKind = iota
	kindBool
	kindInt
)

// spec is one setting and its names in each layer ("" where the layer cannot set it).
type spec struct {
	file, env, flag string
	kind            valueKind
	set             func(c *Config, text string, src Source, from string, l *Layers, cf *configFile) error
}

var specs = []spec{
	{"host", "REWIND_HOST", "host", kindString, func(c *Config, v string, src Source, from string, _ *Layers, _ *configFile) error {
		h, err := checkHost(v, from)
		c.Host.set(h, src, from)
		return err
	}},
	{"port", "REWIND_PORT", "port", kindInt, func(c *Config, v string, src Source, from string, _ *Layers, _ *configFile) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 65535 || strings.HasPrefix(v, "+") {
			return configErr(from, "the port must be a whole number from 0 to 65535 (0 picks a free port), not %q", v)
		}
		c.Port.set(n, src, from)
		return nil
	}},
	{"upstream", "REWIND_UPSTREAM", "upstream", kindString, func(c *Config, v string, src Source, from string, _ *Layers, _ *configFile) error {
		u, err := checkUpstream(v, from)
		c.Upstream.set(u, src, from)
		return err
	}},
	{"preserveCache", "REWIND_PRESERVE_CACHE", "preserve-cache", kindBool, func(c *Config, v string, src Source, from string, _ *Layers, _ *configFile) error {
		b, err := parseBool(v, from)
		c.PreserveCache.set(b, src, from)
		return err
	}},
	{"pruneContext", "REWIND_PRUNE_CONTEXT", "prune-context", kindBool, func(c *Config, v string, src Source, from string, _ *Layers, _ *configFile) error {
		b, err := parseBool(v, from)
		c.PruneContext.set(b, src, from)
		return err
	}},
	{"tenant", "REWIND_TENANT", "tenant", kindString, func(c *Config, v string, src Source, from string, _ *Layers, _ *configFile) error {
		c.Tenant.set(v, src, from)
		return checkName("tenant", v, from)
	}},
	{"storage", "REWIND_STORAGE", "storage", kindString, func(c *Config, v string, src Source, from string, _ *Layers, _ *configFile) error {
		if v != string(StorageMemory) && v != string(StorageSQLite) && v != string(StoragePostgres) {
			return configErr(from, "storage must be memory, sqlite or postgres, not %q", v)
		}
		c.Storage.set(Storage(v), src, from)
		return nil
	}},
	{"storageDirectory", "REWIND_STORAGE_DIRECTORY", "storage-directory", kindString, func(c *Config, v string, src Source, from string, l *Layers, cf *configFile) error {
		base := l.Dir
		if src == SourceFile {
			base = filepath.Dir(cf.path)
		}
		if !filepath.IsAbs(v) {
			if base == "" {
				wd, err := os.Getwd()
				if err != nil {
					return configErr(from, "cannot resolve the relative path %q: %v", v, err)
				}
				base = wd
			}
			v = filepath.Join(base, v)
		}
		c.StorageDirectory.set(filepath.Clean(v), src, from)
		return nil
	}},
	{"epoch", "REWIND_EPOCH", "epoch", kindString, func(c *Config, v string, src Source, from string, _ *Layers, _ *configFile) error {
		c.Epoch.set(v, src, from)
		return checkName("epoch", v, from)
	}},
	{"replayCursor", "REWIND_REPLAY_CURSOR", "replay-cursor", kindString, func(c *Config, v string, src Source, from string, _ *Layers, _ *configFile) error {
		c.ReplayCursor.set(v, src, from)
		return checkName("cursor", v, from)
	}},
	{"databaseUrl", pgtape.DatabaseURLEnv, "", kindString, func(c *Config, v string, src Source, from string, _ *Layers, _ *configFile) error {
		c.DatabaseURL.set(v, src, from)
		return nil
	}},
	{"tlsCert", "REWIND_TLS_CERT", "tls-cert", kindString, func(c *Config, v string, src Source, from string, l *Layers, cf *configFile) error {
		c.TLSCert.set(configPath(v, src, l, cf), src, from)
		return nil
	}},
	{"tlsKey", "REWIND_TLS_KEY", "tls-key", kindString, func(c *Config, v string, src Source, from string, l *Layers, cf *configFile) error {
		c.TLSKey.set(configPath(v, src, l, cf), src, from)
		return nil
	}},
	{"metricsListen", "REWIND_METRICS_LISTEN", "metrics-listen", kindString, func(c *Config, v string, src Source, from string, _ *Layers, _ *configFile) error {
		c.MetricsListen.set(v, src, from)
		if _, _, err := net.SplitHostPort(v); err != nil {
			return configErr(from, "the metrics address must be host:port (127.0.0.1:9090), not %q", v)
		}
		return nil
	}},
	{"", "", "allow-remote", kindBool, func(c *Config, v string, src Source, from string, _ *Layers, _ *configFile) error {
		b, err := parseBool(v, from)
		c.AllowRemote.set(b, src, from)
		return err
	}},
	{"", "", "record-only", kindBool, func(c *Config, v string, src Source, from string, _ *Layers, _ *configFile) error {
		b, err := parseBool(v, from)
		c.RecordOnly.set(b, src, from)
		return err
	}},
}

// Resolve builds the configuration from its layers: the defaults, then the active profile's
// defaults, then the file (--config, else REWIND_CONFIG), then the environment (REWIND_*),
// then the flags, each overriding the ones before. It checks every layer fully and the
// result as a whole before anything listens: an invalid value in any layer is an error,
// even when a later layer overrides it. Every error is a *ConfigError (errors.Is ErrConfig)
// naming the flag, variable or file field and what to do.
func Resolve(l Layers) (*Config, error) {
	env := l.LookupEnv
	if env == nil {
		env = func(string) (string, bool) { return "", false }
	}
	c := defaults(l.Workspace)

	// The configuration file.
	var cf *configFile
	if fv, ok := l.Flags["config"]; ok {
		c.ConfigFile.set(absFrom(fv.Value, l.Dir), SourceFlag, "--config")
	} else if v, ok := env(EnvConfig); ok {
		if v == "" {
			return nil, configErr(EnvConfig, "is set but empty: unset it, or name a configuration file")
		}
		c.ConfigFile.set(absFrom(v, l.Dir), SourceEnv, EnvConfig)
	}
	if c.ConfigFile.Value != "" {
		var err error
		if cf, err = readConfigFile(c.ConfigFile.Value, c.ConfigFile.From); err != nil {
			return nil, err
		}
	}

	// The profile first: its defaults sit below the file, the environment and the flags.
	profile := spec{"profile", "REWIND_PROFILE", "profile", kindString, func(c *Config, v string, src Source, from string, _ *Layers, _ *configFile) error {
		switch Profile(v) {
		case ProfileCompat, ProfileLean, ProfileMax:
			c.Profile.set(Profile(v), src, from)
			return nil
		}
		return configErr(from, "the profile must be compat, lean or max, not %q", v)
	}}
	if err := applyLayers(c, []spec{profile}, &l, cf, env); err != nil {
		return nil, err
	}
	if c.Profile.Value == ProfileLean {
		c.PreserveCache.set(true, SourceProfile, "lean")
	}
	if err := applyLayers(c, specs, &l, cf, env); err != nil {
		return nil, err
	}
	if cf != nil {
		over, err := cf.prices()
		if err != nil {
			return nil, err
		}
		if len(over) > 0 {
			c.Prices.set(DefaultPrices.merged(over), SourceFile, cf.path+": prices")
		}
	}
	if c.RecordOnly.Value {
		c.ReplayCursor.set("", SourceFlag, "--record-only")
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	return c, nil
}

// defaults is the configuration before any layer.
func defaults(workspace string) *Config {
	c := &Config{}
	c.Profile.set(ProfileCompat, SourceDefault, "default")
	c.Host.set(DefaultHost, SourceDefault, "default")
	c.Port.set(DefaultPort, SourceDefault, "default")
	c.AllowRemote.set(false, SourceDefault, "default")
	c.Upstream.set(DefaultUpstream, SourceDefault, "default")
	c.PreserveCache.set(false, SourceDefault, "default")
	c.PruneContext.set(false, SourceDefault, "default")
	c.Tenant.set(DefaultTenant, SourceDefault, "default")
	c.Storage.set(StorageMemory, SourceDefault, "default")
	c.StorageDirectory.set(filepath.Join(workspace, filepath.FromSlash(DefaultStorageDirectory)), SourceDefault, "default")
	c.Epoch.set(DefaultEpoch, SourceDefault, "default")
	c.ReplayCursor.set("", SourceDefault, "default")
	c.RecordOnly.set(false, SourceDefault, "default")
	c.DatabaseURL.set("", SourceDefault, "default")
	c.TLSCert.set("", SourceDefault, "default")
	c.TLSKey.set("", SourceDefault, "default")
	c.MetricsListen.set("", SourceDefault, "default")
	c.ConfigFile.set("", SourceDefault, "default")
	c.Prices.set(DefaultPrices, SourceDefault, "default")
	return c
}

// applyLayers applies the file, the environment and the flags, in that order, to c.
func applyLayers(c *Config, ss []spec, l *Layers, cf *configFile, env func(string) (string, bool)) error {
	for _, s := range ss {
		if cf != nil && s.file != "" {
			v, ok, err := cf.text(s.file, s.kind)
			if err != nil {
				return err
			}
			if ok {
				if err := s.set(c, v, SourceFile, cf.path+": "+s.file, l, cf); err != nil {
					return err
				}
			}
		}
		if s.env != "" {
			if v, ok := env(s.env); ok {
				if v == "" {
					return configErr(s.env, "is set but empty: unset it to use the file or the default, or give a value")
				}
				if err := s.set(c, v, SourceEnv, s.env, l, cf); err != nil {
					return err
				}
			}
		}
		if s.flag != "" {
			if fv, ok := l.Flags[s.flag]; ok {
				if err := s.set(c, fv.Value, SourceFlag, flagFrom(s.flag, fv), l, cf); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// check validates the configuration as a whole.
func (c *Config) check() error {
	if c.Profile.Value == ProfileMax {
		return &ConfigError{From: c.Profile.From, Err: ErrProfileMax,
			Problem: "profile max is not available: observation retrieval and its shaping guarantees are not implemented; use lean"}
	}
	if (c.TLSCert.Value == "") != (c.TLSKey.Value == "") {
		from := c.TLSCert.From
		if c.TLSCert.Value == "" {
			from = c.TLSKey.From
		}
		return configErr(from, "TLS needs both --tls-cert and --tls-key (PEM files): give both, or neither")
	}
	team := c.Storage.Value == StoragePostgres
	switch {
	case isLoopback(c.Host.Value):
	case team && c.TLSCert.Value == "":
		return configErr(c.Host.From, "%q is not a loopback address: a team gateway serves other machines only over TLS: add --tls-cert and --tls-key", c.Host.Value)
	case !team && !c.AllowRemote.Value:
		return configErr(c.Host.From, "%q is not a loopback address: the gateway has no authentication of its own and listens on 127.0.0.1 unless asked; to accept connections from other machines add --allow-remote, or run a team gateway (--storage postgres: API keys and TLS)", c.Host.Value)
	}
	if team {
		if c.DatabaseURL.Value == "" {
			return configErr(pgtape.DatabaseURLEnv, "--storage postgres needs a database: set %s (or the file's databaseUrl) to a PostgreSQL connection string", pgtape.DatabaseURLEnv)
		}
		if c.StorageDirectory.Source != SourceDefault {
			return configErr(c.StorageDirectory.From, "applies only to --storage sqlite: a team gateway keeps its tapes in PostgreSQL")
		}
	} else if c.DatabaseURL.Source == SourceFile {
		return configErr(c.DatabaseURL.From, "applies only to --storage postgres: add it, or remove the field")
	}
	if c.Storage.Value == StorageMemory {
		for _, s := range []struct {
			set  bool
			from string
		}{
			{c.RecordOnly.Value, c.RecordOnly.From},
			{c.ReplayCursor.Value != "", c.ReplayCursor.From},
			{c.Epoch.Source != SourceDefault, c.Epoch.From},
			{c.StorageDirectory.Source != SourceDefault, c.StorageDirectory.From},
		} {
			if s.set {
				return configErr(s.from, "applies only to the durable tape: add --storage sqlite (or REWIND_STORAGE=sqlite, or postgres for a team), or remove it")
			}
		}
	}
	return nil
}

func parseBool(v, from string) (bool, error) {
	switch v {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, configErr(from, "a boolean must be exactly true or false, not %q", v)
}

func checkName(kind, v, from string) error {
	if err := tape.ValidateName(kind, v); err != nil {
		return configErr(from, "%s", strings.TrimPrefix(err.Error(), tape.ErrInvalid.Error()+": "))
	}
	return nil
}

// checkHost accepts an IP address (IPv6 with or without brackets) or a host name.
func checkHost(v, from string) (string, error) {
	h := strings.TrimSuffix(strings.TrimPrefix(v, "["), "]")
	if net.ParseIP(h) != nil {
		return h, nil
	}
	if len(h) > 253 || h == "" || strings.Trim(h, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-") != "" {
		return v, configErr(from, "%q is not an IP address or a host name (give the address only; the port is --port)", v)
	}
	return h, nil
}

// isLoopback reports whether host names only this machine: localhost or a loopback IP.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkUpstream accepts an http or https URL with a host and a root path, and nothing else:
// no credentials, query or fragment. It returns the URL without a trailing slash.
func checkUpstream(v, from string) (string, error) {
	u, err := url.Parse(v)
	switch {
	case err != nil:
		return v, configErr(from, "%q is not a URL: %v", v, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return v, configErr(from, "the upstream must be an http:// or https:// URL, not %q", v)
	case u.User != nil:
		return v, configErr(from, "the upstream URL must not carry credentials (user:password@): the provider's key comes in each request's headers")
	case u.Host == "" || u.Hostname() == "":
		return v, configErr(from, "the upstream URL %q has no host", v)
	case u.Opaque != "" || (u.Path != "" && u.Path != "/") || u.RawPath != "":
		return v, configErr(from, "the upstream URL must have a root path (like https://api.anthropic.com), not %q: request paths are forwarded as the client sends them", u.Path)
	case u.RawQuery != "" || u.ForceQuery || strings.Contains(v, "?"):
		return v, configErr(from, "the upstream URL must not have a query (?...)")
	case u.Fragment != "" || strings.Contains(v, "#"):
		return v, configErr(from, "the upstream URL must not have a fragment (#...)")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return v, configErr(from, "the upstream URL's port %q is not 1 to 65535", p)
		}
	}
	return u.Scheme + "://" + u.Host, nil
}

// configPath makes a path from a flag or the environment absolute against l.Dir, and one from
// the file against the file's folder.
func configPath(v string, src Source, l *Layers, cf *configFile) string {
	if src == SourceFile {
		return absFrom(v, filepath.Dir(cf.path))
	}
	return absFrom(v, l.Dir)
}

func absFrom(p, dir string) string {
	if filepath.IsAbs(p) {
		return p
	}
	if dir == "" {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
		return p
	}
	return filepath.Join(dir, p)
}
