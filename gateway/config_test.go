package gateway

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// resolveArgs resolves a command line, an environment and an optional file content.
func resolveArgs(t *testing.T, args []string, env map[string]string, file string) (*Config, error) {
	t.Helper()
	dir := t.TempDir()
	if file != "" {
		p := filepath.Join(dir, "gateway.json")
		if err := os.WriteFile(p, []byte(file), 0o600); err != nil {
			t.Fatal(err)
		}
		if env == nil {
			env = map[string]string{}
		}
		if _, ok := env[EnvConfig]; !ok {
			env[EnvConfig] = p
		}
	}
	flags, err := ScanFlags(append([]string{"gateway"}, args...))
	if err != nil {
		return nil, err
	}
	return Resolve(Layers{Flags: flags, Workspace: dir, Dir: dir, LookupEnv: func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}})
}

func TestPrecedence(t *testing.T) {
	type want struct {
		value  string
		source Source
	}
	get := map[string]func(c *Config) (string, Source){
		"profile":  func(c *Config) (string, Source) { return string(c.Profile.Value), c.Profile.Source },
		"port":     func(c *Config) (string, Source) { return c.Port.String(), c.Port.Source },
		"upstream": func(c *Config) (string, Source) { return c.Upstream.Value, c.Upstream.Source },
		"preserve": func(c *Config) (string, Source) { return c.PreserveCache.String(), c.PreserveCache.Source },
		"prune":    func(c *Config) (string, Source) { return c.PruneContext.String(), c.PruneContext.Source },
		"tenant":   func(c *Config) (string, Source) { return c.Tenant.Value, c.Tenant.Source },
		"storage":  func(c *Config) (string, Source) { return string(c.Storage.Value), c.Storage.Source },
		"epoch":    func(c *Config) (string, Source) { return c.Epoch.Value, c.Epoch.Source },
		"cursor":   func(c *Config) (string, Source) { return c.ReplayCursor.Value, c.ReplayCursor.Source },
	}
	cases := []struct {
		name string
		args []string
		env  map[string]string
		file string
		want map[string]want
	}{
		{"defaults", nil, nil, "", map[string]want{
			"profile": {"compat", SourceDefault}, "port": {"8788", SourceDefault}, "upstream": {"https://api.anthropic.com", SourceDefault},
			"preserve": {"false", SourceDefault}, "prune": {"false", SourceDefault}, "tenant": {"default", SourceDefault}, "storage": {"memory", SourceDefault}}},
		{"lean turns on cache preservation, not pruning", []string{"--profile", "lean"}, nil, "", map[string]want{
			"profile": {"lean", SourceFlag}, "preserve": {"true", SourceProfile}, "prune": {"false", SourceDefault}}},
		{"file over profile", nil, nil, `{"profile":"lean","preserveCache":false,"port":9001}`, map[string]want{
			"profile": {"lean", SourceFile}, "preserve": {"false", SourceFile}, "port": {"9001", SourceFile}}},
		{"env over file", nil, map[string]string{"REWIND_PORT": "9002", "REWIND_PROFILE": "compat", "REWIND_TENANT": "acme"},
			`{"profile":"lean","port":9001,"tenant":"other"}`, map[string]want{
				"profile": {"compat", SourceEnv}, "preserve": {"false", SourceDefault}, "port": {"9002", SourceEnv}, "tenant": {"acme", SourceEnv}}},
		{"flag over env over file", []string{"--port=9003", "--no-prune-context", "--upstream", "http://127.0.0.1:1234/"},
			map[string]string{"REWIND_PORT": "9002", "REWIND_PRUNE_CONTEXT": "true", "REWIND_UPSTREAM": "http://127.0.0.1:9"},
			`{"port":9001,"pruneContext":true}`, map[string]want{
				"port": {"9003", SourceFlag}, "prune": {"false", SourceFlag}, "upstream": {"http://127.0.0.1:1234", SourceFlag}}},
		{"explicit flag beats profile default", []string{"--profile", "lean", "--no-preserve-cache"}, nil, "", map[string]want{
			"preserve": {"false", SourceFlag}}},
		{"env profile lean, file says nothing about cache", nil, map[string]string{"REWIND_PROFILE": "lean"}, `{"port":1}`, map[string]want{
			"preserve": {"true", SourceProfile}}},
		{"tape settings from every layer", []string{"--epoch", "e3"}, map[string]string{"REWIND_STORAGE": "sqlite", "REWIND_REPLAY_CURSOR": "c2"},
			`{"storage":"memory","epoch":"e1","replayCursor":"c1"}`, map[string]want{
				"storage": {"sqlite", SourceEnv}, "epoch": {"e3", SourceFlag}, "cursor": {"c2", SourceEnv}}},
		{"--record-only clears a cursor from the environment", []string{"--record-only"}, map[string]string{"REWIND_STORAGE": "sqlite", "REWIND_REPLAY_CURSOR": "c2"}, "", map[string]want{
			"cursor": {"", SourceFlag}}},
		{"--record-only clears a cursor from the file", []string{"--record-only"}, nil, `{"storage":"sqlite","replayCursor":"c1"}`, map[string]want{
			"cursor": {"", SourceFlag}, "storage": {"sqlite", SourceFile}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := resolveArgs(t, tc.args, tc.env, tc.file)
			if err != nil {
				t.Fatal(err)
			}
			for k, w := range tc.want {
				v, src := get[k](c)
				if v != w.value || src != w.source {
					t.Errorf("%s = %q from %s, want %q from %s", k, v, src, w.value, w.source)
				}
			}
		})
	}
}

// TestStartupFailures is every startup failure of issue 8: each must fail before anything
// listens, with a message that names the culprit.
func TestStartupFailures(t *testing.T) {
	cases := []struct {
		name string
		args []string
		env  map[string]string
		file string
		want string // in the message
	}{
		{"duplicate flag", []string{"--port", "1", "--port", "2"}, nil, "", "given twice"},
		{"duplicate flag, = form", []string{"--tenant=a", "--tenant", "a"}, nil, "", "given twice"},
		{"duplicate boolean flag", []string{"--record-only", "--record-only", "--storage", "sqlite"}, nil, "", "given twice"},
		{"preserve and no-preserve", []string{"--preserve-cache", "--no-preserve-cache"}, nil, "", "conflicts with --preserve-cache"},
		{"prune and no-prune", []string{"--no-prune-context", "--prune-context"}, nil, "", "conflicts with --no-prune-context"},
		{"record-only with replay-cursor", []string{"--storage", "sqlite", "--record-only", "--replay-cursor", "c"}, nil, "", "conflicts with --replay-cursor"},
		{"missing value at the end", []string{"--port"}, nil, "", "needs a value"},
		{"missing value before a flag", []string{"--tenant", "--port", "1"}, nil, "", "needs a value"},
		{"empty flag value", []string{"--upstream="}, nil, "", "empty"},
		{"boolean flag value", []string{"--preserve-cache=yes"}, nil, "", "exactly true or false"},
		{"negated flag with a value", []string{"--no-preserve-cache=true"}, nil, "", "takes no value"},
		{"unknown file field", nil, nil, `{"prot":1}`, `unknown field "prot"`},
		{"explicit null in the file", nil, nil, `{"tenant":null}`, "explicit null"},
		{"duplicate file field", nil, nil, `{"port":1,"port":2}`, "given twice"},
		{"file boolean as a string", nil, nil, `{"preserveCache":"true"}`, "JSON boolean"},
		{"file port as a string", nil, nil, `{"port":"8788"}`, "JSON integer"},
		{"file port fractional", nil, nil, `{"port":87.5}`, "JSON integer"},
		{"file not an object", nil, nil, `[1]`, "one JSON object"},
		{"file trailing data", nil, nil, `{"port":1} {}`, "after the configuration object"},
		{"file empty string", nil, nil, `{"tenant":""}`, "is empty"},
		{"file missing", nil, map[string]string{EnvConfig: "/nonexistent/gateway.json"}, "", "cannot read"},
		{"env config empty", nil, map[string]string{EnvConfig: ""}, "", "set but empty"},
		{"env boolean TRUE", nil, map[string]string{"REWIND_PRESERVE_CACHE": "TRUE"}, "", "exactly true or false"},
		{"env boolean 1", nil, map[string]string{"REWIND_PRUNE_CONTEXT": "1"}, "", "exactly true or false"},
		{"env empty value", nil, map[string]string{"REWIND_PORT": ""}, "", "set but empty"},
		{"env port not a number", nil, map[string]string{"REWIND_PORT": "80a"}, "", "whole number"},
		{"port out of range", []string{"--port", "65536"}, nil, "", "whole number"},
		{"upstream ftp", []string{"--upstream", "ftp://example.com"}, nil, "", "http:// or https://"},
		{"upstream not a URL", []string{"--upstream", "api.anthropic.com"}, nil, "", "http:// or https://"},
		{"upstream with a path", []string{"--upstream", "https://example.com/v1"}, nil, "", "root path"},
		{"upstream with credentials", []string{"--upstream", "https://user:pw@example.com"}, nil, "", "credentials"},
		{"upstream with a query", []string{"--upstream", "https://example.com/?a=1"}, nil, "", "query"},
		{"upstream with an empty query", []string{"--upstream", "https://example.com/?"}, nil, "", "query"},
		{"upstream with a fragment", []string{"--upstream", "https://example.com/#x"}, nil, "", "fragment"},
		{"upstream without a host", []string{"--upstream", "https:///"}, nil, "", "no host"},
		{"record-only without sqlite", []string{"--record-only"}, nil, "", "add --storage sqlite"},
		{"replay-cursor without sqlite", []string{"--replay-cursor", "c1"}, nil, "", "add --storage sqlite"},
		{"replay-cursor from the environment without sqlite", nil, map[string]string{"REWIND_REPLAY_CURSOR": "c1"}, "", "add --storage sqlite"},
		{"epoch without sqlite", nil, nil, `{"epoch":"e1"}`, "add --storage sqlite"},
		{"profile max", []string{"--profile", "max"}, nil, "", "not available: observation retrieval and its shaping guarantees are not implemented; use lean"},
		{"profile max from the file", nil, nil, `{"profile":"max"}`, "use lean"},
		{"unknown profile", []string{"--profile", "fast"}, nil, "", "compat, lean or max"},
		{"unknown storage", []string{"--storage", "redis"}, nil, "", "memory, sqlite or postgres"},
		{"non-loopback bind", []string{"--host", "0.0.0.0"}, nil, "", "--allow-remote"},
		{"non-loopback bind from the environment", nil, map[string]string{"REWIND_HOST": "192.0.2.1"}, "", "--allow-remote"},
		{"host with a port", []string{"--host", "127.0.0.1:80"}, nil, "", "not an IP address"},
		{"tenant with a slash", []string{"--tenant", "a/b"}, nil, "", "tenant name"},
		{"invalid cursor name", []string{"--storage", "sqlite", "--replay-cursor", "-x"}, nil, "", "cursor name"},
		{"price missing a field", nil, nil, `{"prices":{"m":{"input":1}}}`, "is missing"},
		{"price negative", nil, nil, `{"prices":{"m":{"input":-1,"output":1,"cache_write_5m":1,"cache_write_1h":1,"cache_read":1}}}`, "non-negative"},
		{"price null", nil, nil, `{"prices":{"m":{"input":null,"output":1,"cache_write_5m":1,"cache_write_1h":1,"cache_read":1}}}`, "non-negative"},
		{"price unknown field", nil, nil, `{"prices":{"m":{"inptu":1}}}`, "unknown field"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := resolveArgs(t, tc.args, tc.env, tc.file)
			if err == nil {
				t.Fatal("resolved; want a startup failure")
			}
			if !errors.Is(err, ErrConfig) {
				t.Errorf("error %v does not match ErrConfig", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
		})
	}
	_, err := resolveArgs(t, []string{"--profile=max"}, nil, "")
	if !errors.Is(err, ErrProfileMax) {
		t.Errorf("profile max: %v does not match ErrProfileMax", err)
	}
}

func TestAllowRemote(t *testing.T) {
	c, err := resolveArgs(t, []string{"--host", "0.0.0.0", "--allow-remote"}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if c.Host.Value != "0.0.0.0" || !c.AllowRemote.Value {
		t.Errorf("host %q allow-remote %v", c.Host.Value, c.AllowRemote.Value)
	}
	for _, h := range []string{"localhost", "127.0.0.2", "::1", "[::1]"} {
		if _, err := resolveArgs(t, []string{"--host", h}, nil, ""); err != nil {
			t.Errorf("loopback %s: %v", h, err)
		}
	}
}

func TestScanFlagsSkipsGlobalsAndOthers(t *testing.T) {
	f, err := ScanFlags([]string{"--workspace", "--port", "--json", "gateway", "--port", "7", "--", "--port", "8"})
	if err != nil {
		t.Fatal(err)
	}
	if len(f) != 1 || f["port"].Value != "7" {
		t.Errorf("flags %v", f)
	}
}

func TestFilePrices(t *testing.T) {
	c, err := resolveArgs(t, nil, nil, `{"prices":{"claude-custom-1":{"input":1,"output":2,"cache_write_5m":3,"cache_write_1h":4,"cache_read":0.5}}}`)
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := c.Prices.Value.Lookup("claude-custom-1"); !ok || p.CacheRead != 0.5 || c.Prices.Source != SourceFile {
		t.Errorf("custom price %+v %v from %s", p, ok, c.Prices.Source)
	}
	if _, ok := c.Prices.Value.Lookup("claude-sonnet-5-5"); !ok {
		t.Error("the defaults were lost")
	}
	if _, ok := DefaultPrices.Lookup("claude-custom-1"); ok {
		t.Error("the file changed DefaultPrices")
	}
}

func TestStorageDirectoryRelativeToFile(t *testing.T) {
	c, err := resolveArgs(t, nil, nil, `{"storage":"sqlite","storageDirectory":"tapes"}`)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(filepath.Dir(c.ConfigFile.Value), "tapes"); c.StorageDirectory.Value != want {
		t.Errorf("storage directory %q, want %q", c.StorageDirectory.Value, want)
	}
}

func TestBannerNamesSources(t *testing.T) {
	c, err := resolveArgs(t, []string{"--port", "9"}, map[string]string{"REWIND_TENANT": "acme"}, `{"profile":"lean"}`)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := c.WriteBanner(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"(flag --port)", "(env REWIND_TENANT)", "gateway.json: profile)", "(profile lean)", "CLEARED ON RESTART", "cache preservation: on", "loopback only"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("banner lacks %q:\n%s", want, b.String())
		}
	}
}
