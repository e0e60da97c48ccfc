package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// throwawayCert is a self-signed certificate for 127.0.0.1, made for one run: the mock upstream
// serves HTTPS with it, and the gateway trusts it as its only root through SSL_CERT_FILE, as it
// trusts a provider's through the system's roots.
type throwawayCert struct {
	CertFile, KeyFile string
	Roots             *x509.CertPool
}

// newThrowawayCert writes a new certificate and its key, PEM, into dir.
func newThrowawayCert(dir string) (*throwawayCert, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: "agent-rewind bench mock upstream"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	c := &throwawayCert{CertFile: filepath.Join(dir, "mock-cert.pem"), KeyFile: filepath.Join(dir, "mock-key.pem"), Roots: x509.NewCertPool()}
	c.Roots.AddCert(cert)
	if err := os.WriteFile(c.CertFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(c.KeyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return nil, err
	}
	return c, nil
}

// client returns a bench client (newBenchClient) that trusts the certificate: HTTP/1.1 over
// TLS, as the gateway speaks to the upstream.
func (c *throwawayCert) client() *http.Client {
	cl := newBenchClient()
	cl.Transport.(*http.Transport).TLSClientConfig = &tls.Config{RootCAs: c.Roots}
	return cl
}
