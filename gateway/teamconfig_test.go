package gateway

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agent-rewind/rewind/tools/mockanthropic"
)

// selfSigned writes a certificate for 127.0.0.1 and its key as PEM files in dir.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "agent-rewind test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

func TestTeamConfig(t *testing.T) {
	db := map[string]string{"REWIND_DATABASE_URL": "postgres://u:hunter2@db/rewind"}
	cert, key, _ := selfSigned(t, t.TempDir())
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want string // "" for success
	}{
		{"team on loopback", []string{"--storage", "postgres"}, db, ""},
		{"no database", []string{"--storage", "postgres"}, nil, "REWIND_DATABASE_URL"},
		{"remote without TLS", []string{"--storage", "postgres", "--host", "0.0.0.0"}, db, "--tls-cert and --tls-key"},
		{"remote with allow-remote but no TLS", []string{"--storage", "postgres", "--host", "0.0.0.0", "--allow-remote"}, db, "--tls-cert and --tls-key"},
		{"remote with TLS", []string{"--storage", "postgres", "--host", "0.0.0.0", "--tls-cert", cert, "--tls-key", key}, db, ""},
		{"half of TLS", []string{"--tls-cert", cert}, nil, "both --tls-cert and --tls-key"},
		{"storage directory", []string{"--storage", "postgres", "--storage-directory", "x"}, db, "only to --storage sqlite"},
		{"epoch without a tape store", []string{"--epoch", "e"}, nil, "postgres for a team"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := resolveArgs(t, tc.args, tc.env, "")
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				var b strings.Builder
				c.WriteBanner(&b)
				if strings.Contains(b.String(), "hunter2") || !strings.Contains(b.String(), "postgres://u:xxxxx@db/rewind") {
					t.Fatalf("the banner must show the database without its password:\n%s", b.String())
				}
				return
			}
			if err == nil || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v; want a configuration error saying %q", err, tc.want)
			}
		})
	}
}

// A team gateway with a certificate serves HTTPS (and refuses plain HTTP).
func TestTeamServesTLS(t *testing.T) {
	url, s := teamDB(t)
	_, apiKey := newKey(t, s, "acme")
	cert, key, pool := selfSigned(t, t.TempDir())
	mock := startMock(t, mockanthropic.Options{})
	gw := teamReplica(t, mock.URL, url, func(c *Config) {
		c.TLSCert.set(cert, SourceFlag, "--tls-cert")
		c.TLSKey.set(key, SourceFlag, "--tls-key")
	})
	httpsURL := "https" + strings.TrimPrefix(gw, "http")
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, _ := http.NewRequest("POST", httpsURL+"/v1/messages", strings.NewReader(messagesBody("tls", false)))
	req.Header.Set("x-api-key", key1)
	req.Header.Set("anthropic-version", "2023-06-01")
	req.Header.Set(HeaderKey, apiKey)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.TLS == nil {
		t.Fatalf("HTTPS call: %d (TLS %v)", resp.StatusCode, resp.TLS != nil)
	}
	if resp, err := testClient.Get(gw + "/healthz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Fatal("plain HTTP was served on the TLS port")
		}
	}
}
