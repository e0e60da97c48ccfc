package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/gateway"
	"github.com/agent-rewind/rewind/tools/mockanthropic"
)

// `agent-rewind gateway --json` says on stdout where it listens and which APIs each mechanism
// covers; an OpenAI Responses call through the binary is replayed and its savings priced.
func TestGatewayJSONAndOpenAI(t *testing.T) {
	mock := mockanthropic.New(mockanthropic.Options{})
	if err := mock.Start(); err != nil {
		t.Fatal(err)
	}
	defer mock.Close()
	dir := t.TempDir()
	g := startGatewayProc(t, dir, nil, "--json", "--upstream", mock.URL, "--profile", "lean")
	var line string
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if line = g.stdout.String(); strings.HasSuffix(line, "\n") {
			break
		}
	}
	var st gateway.Startup
	if err := json.Unmarshal([]byte(line), &st); err != nil || st.Kind != gateway.StartupKind || st.Listen != g.url {
		t.Fatalf("--json startup line %q (%v), listening on %s", line, err, g.url)
	}
	apis := map[string][]gateway.API{}
	for _, m := range st.Mechanisms {
		apis[m.Name] = m.APIs
	}
	all := []gateway.API{gateway.APIMessages, gateway.APIResponses, gateway.APIChat}
	if !slices.Equal(apis["exact-replay"], all) || !slices.Equal(apis["pruning"], all) || !slices.Equal(apis["savings-receipt"], all) ||
		!slices.Equal(apis["cache-preservation"], []gateway.API{gateway.APIMessages}) || len(st.APIs) != 3 {
		t.Errorf("mechanisms' APIs %v, understood %v", apis, st.APIs)
	}
	if !strings.Contains(g.stderr.String(), "[APIs: anthropic-messages, openai-responses, openai-chat]") {
		t.Errorf("the banner does not say which APIs replay covers:\n%s", g.stderr.String())
	}
	body := `{"model":"gpt-5","store":false,"stream":true,"input":"e2e"}`
	var bodies [][]byte
	for _, want := range []string{"miss", "hit"} {
		req, _ := http.NewRequest("POST", g.url+"/v1/responses", strings.NewReader(body))
		req.Header.Set("authorization", "Bearer sk-openai-e2e")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("X-Rewind-Replay") != want {
			t.Fatalf("Responses call: %d %s, want %s: %s", resp.StatusCode, resp.Header.Get("X-Rewind-Replay"), want, b)
		}
		bodies = append(bodies, b)
	}
	if !bytes.Equal(bodies[0], bodies[1]) || mock.PathHits("/v1/responses") != 1 {
		t.Errorf("the replay differs or reached the upstream (%d calls)", mock.PathHits("/v1/responses"))
	}
	if code := g.stop(t); code != 0 {
		t.Fatalf("exit %d:\n%s", code, g.stderr.String())
	}
	r := runEnv(t, dir, nil, "--json", "savings")
	var s gateway.Savings
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil || s.ReplayedCalls != 1 || !s.ByModel["gpt-5"].Priced || s.AvoidedCostUSD <= 0 || s.AvoidedTokens.Reasoning != 2 {
		t.Errorf("savings: %s (%v)", r.stdout, err)
	}
	if r = runEnv(t, dir, nil, "savings"); !strings.Contains(r.stdout, "(of which reasoning 2)") {
		t.Errorf("savings text does not say the reasoning part:\n%s", r.stdout)
	}
}

// The command docs/gateway.md shows for OpenAI starts as written (no call is made: nothing
// reaches the network until a client calls).
func TestGatewayOpenAIUpstreamAsDocumented(t *testing.T) {
	g := startGatewayProc(t, t.TempDir(), nil, "--upstream", "https://api.openai.com")
	if !strings.Contains(g.stderr.String(), "https://api.openai.com") || !strings.Contains(g.stderr.String(), "(flag --upstream)") {
		t.Errorf("banner:\n%s", g.stderr.String())
	}
	if code := g.stop(t); code != 0 {
		t.Fatalf("exit %d:\n%s", code, g.stderr.String())
	}
}
