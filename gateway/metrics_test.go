package gateway

import (
	"bufio"
	"io"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/agent-rewind/rewind/tools/mockanthropic"
)

// scrape reads the metrics and checks the exposition format: every sample's family has HELP
// and TYPE lines before it, and every value is a number.
func scrape(t *testing.T, g *Gateway) map[string]float64 {
	t.Helper()
	srv := httptest.NewServer(g.MetricsHandler())
	defer srv.Close()
	resp, err := testClient.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Fatalf("Content-Type %q", ct)
	}
	b, _ := io.ReadAll(resp.Body)
	out := map[string]float64{}
	typed := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		line := sc.Text()
		if f, ok := strings.CutPrefix(line, "# TYPE "); ok {
			typed[strings.Fields(f)[0]] = true
			continue
		}
		if strings.HasPrefix(line, "#") {
			continue
		}
		name, value, _ := strings.Cut(line, " ")
		family := name
		if i := strings.IndexByte(family, '{'); i >= 0 {
			family = family[:i]
		}
		for _, suf := range []string{"_bucket", "_sum", "_count"} {
			if base, ok := strings.CutSuffix(family, suf); ok && typed[base] {
				family = base
			}
		}
		if !typed[family] {
			t.Fatalf("sample %q has no TYPE line before it", line)
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			t.Fatalf("sample %q: %v", line, err)
		}
		out[name] = v
	}
	return out
}

func TestMetrics(t *testing.T) {
	mock := startMock(t, mockanthropic.Options{})
	cfg, _ := testConfig(t, mock.URL)
	g, gw := startGateway(t, cfg)
	for range 2 {
		post(t, gw, "/v1/messages", messagesBody("metrics", false), "x-api-key", key1)
		post(t, gw, "/v1/responses", `{"model":"gpt-5","input":"stored, never replayed"}`, "authorization", openAIKey)
	}
	m := scrape(t, g)
	for name, want := range map[string]float64{
		"agent_rewind_gateway_requests_total":                     4,
		"agent_rewind_gateway_replays_total":                      1,
		"agent_rewind_gateway_misses_total":                       1,
		"agent_rewind_gateway_bypassed_total":                     2,
		"agent_rewind_gateway_database_errors_total":              0,
		"agent_rewind_gateway_tape_queue_depth":                   0,
		"agent_rewind_gateway_upstream_seconds_count":             3,
		`agent_rewind_gateway_upstream_seconds_bucket{le="+Inf"}`: 3,
	} {
		if m[name] != want {
			t.Errorf("%s = %v, want %v", name, m[name], want)
		}
	}
}

// Database failures are counted.
func TestTeamMetricsCountDatabaseErrors(t *testing.T) {
	mock := startMock(t, mockanthropic.Options{})
	cfg, _ := testConfig(t, mock.URL)
	cfg.Storage.set(StoragePostgres, SourceFlag, "--storage")
	cfg.DatabaseURL.set("postgres://postgres@127.0.0.1:1/none?sslmode=disable&connect_timeout=2", SourceEnv, "REWIND_DATABASE_URL")
	cfg.DeploymentKey = teamDeploymentKey
	g, gw := startGateway(t, cfg)
	post(t, gw, "/v1/messages", messagesBody("x", false), "x-api-key", key1, "x-rewind-key", "rwk_0123456789abcdef_"+strings.Repeat("a", 64))
	if m := scrape(t, g); m["agent_rewind_gateway_database_errors_total"] != 1 {
		t.Fatalf("database errors %v, want 1", m["agent_rewind_gateway_database_errors_total"])
	}
}
