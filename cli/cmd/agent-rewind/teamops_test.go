package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/tape/pgtape"
	"github.com/agent-rewind/rewind/tape/pgtape/pgtest"
	"github.com/agent-rewind/rewind/tools/mockanthropic"
	"github.com/jackc/pgx/v5"
)

// writeCert writes a self-signed certificate for 127.0.0.1 and its key as PEM files in dir.
func writeCert(t *testing.T, dir string) (cert, key string, pool *x509.CertPool) {
	t.Helper()
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "rewind"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(k)
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	c, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(c)
	return cert, key, pool
}

// The commands of docs/team.md ("Running the gateway for a team"), as written: a replica on all interfaces with
// TLS and a metrics listener, keys in text form, and a backup restored with pg_dump and
// pg_restore into a new database that a replica then serves from.
func TestTeamREADMECommands(t *testing.T) {
	db := pgtest.Database(t)
	env := []string{pgtape.DatabaseURLEnv + "=" + db, pgtape.DeploymentKeyEnv + "=" + teamKeyHex}
	dir := t.TempDir()
	if r := runEnv(t, dir, env, "gateway", "migrate"); r.code != 0 || !strings.Contains(r.stdout, "applied migrations") {
		t.Fatalf("gateway migrate: %d %s %s", r.code, r.stdout, r.stderr)
	}
	r := runEnv(t, dir, env, "gateway", "keys", "create", "--tenant", "ci")
	key := strings.TrimSpace(r.stdout)
	if r.code != 0 || !strings.HasPrefix(key, pgtape.APIKeyPrefix) || !strings.Contains(r.stderr, "shown only now") {
		t.Fatalf("gateway keys create: %d %q %s", r.code, r.stdout, r.stderr)
	}
	cert, certKey, pool := writeCert(t, dir)
	mock := mockanthropic.New(mockanthropic.Options{})
	if err := mock.Start(); err != nil {
		t.Fatal(err)
	}
	defer mock.Close()
	g := startGatewayProc(t, dir, env, "--storage", "postgres", "--host", "0.0.0.0", "--upstream", mock.URL,
		"--tls-cert", cert, "--tls-key", certKey, "--metrics-listen", "127.0.0.1:0")
	port := g.url[strings.LastIndexByte(g.url, ':')+1:]
	if !strings.HasPrefix(g.url, "https://") {
		t.Fatalf("listening on %s; want https", g.url)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	send := func(base string) (int, string) {
		req, _ := http.NewRequest("POST", base+"/v1/messages", strings.NewReader(e2eBody))
		req.Header.Set("x-api-key", "sk-ant-e2e")
		req.Header.Set("anthropic-version", "2023-06-01")
		req.Header.Set("x-rewind-key", key)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("X-Rewind-Replay")
	}
	if code, how := send("https://127.0.0.1:" + port); code != 200 || how != "miss" {
		t.Fatalf("HTTPS call: %d %s", code, how)
	}
	m := regexp.MustCompile(`metrics on (http://\S+/metrics)`).FindStringSubmatch(g.stderr.String())
	if m == nil {
		t.Fatalf("no metrics address in:\n%s", g.stderr.String())
	}
	resp, err := http.Get(m[1])
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "agent_rewind_gateway_requests_total 1\n") {
		t.Fatalf("metrics:\n%s", body)
	}
	if c := g.stop(t); c != 0 {
		t.Fatalf("SIGTERM: exit %d", c)
	}

	r = runEnv(t, dir, env, "gateway", "keys", "list", "--tenant", "ci")
	id := strings.Fields(strings.Split(r.stdout, "\n")[1])[0]
	if r.code != 0 || !strings.Contains(r.stdout, "active") || !strings.HasPrefix(key, pgtape.APIKeyPrefix+id) {
		t.Fatalf("gateway keys list: %d %s", r.code, r.stdout)
	}

	// Back up, restore into a new database, and serve the recorded replay from it.
	pgDump, err1 := exec.LookPath("pg_dump")
	pgRestore, err2 := exec.LookPath("pg_restore")
	if err1 != nil || err2 != nil {
		if os.Getenv("REWIND_CI") == "1" {
			t.Fatalf("pg_dump or pg_restore missing (REWIND_CI=1): %v %v", err1, err2)
		}
		t.Skip("pg_dump or pg_restore is missing: install PostgreSQL's client tools")
	}
	dump := filepath.Join(dir, "rewind.dump")
	if out, err := exec.Command(pgDump, "--format=custom", "--file="+dump, db).CombinedOutput(); err != nil {
		t.Fatalf("pg_dump: %v %s", err, out)
	}
	restored := pgtest.Database(t)
	if out, err := exec.Command(pgRestore, "--clean", "--if-exists", "--dbname="+restored, dump).CombinedOutput(); err != nil {
		t.Fatalf("pg_restore: %v %s", err, out)
	}
	env2 := []string{pgtape.DatabaseURLEnv + "=" + restored, pgtape.DeploymentKeyEnv + "=" + teamKeyHex}
	g2 := startGatewayProc(t, dir, env2, "--storage", "postgres", "--upstream", mock.URL)
	code, h, _ := postMessages(t, g2.url, e2eBody, "x-rewind-key", key)
	if code != 200 || h.Get("X-Rewind-Replay") != "hit" {
		t.Fatalf("from the restored database: %d %s; want the backed-up replay", code, h.Get("X-Rewind-Replay"))
	}
	if r := runEnv(t, dir, env2, "gateway", "keys", "revoke", "--tenant", "ci", id); r.code != 0 || !strings.Contains(r.stdout, "revoked key "+id) {
		t.Fatalf("gateway keys revoke: %d %s %s", r.code, r.stdout, r.stderr)
	}
	conn, err := pgx.Connect(context.Background(), restored)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var revoked bool
	conn.QueryRow(context.Background(), `SELECT revoked_at IS NOT NULL FROM rewind_api_keys WHERE id = $1`, id).Scan(&revoked)
	if !revoked {
		t.Fatal("the key is not revoked in the database")
	}
}
