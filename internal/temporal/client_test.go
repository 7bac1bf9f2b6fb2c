package temporal

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// pki is a CA with a server and a client certificate, as PEM files.
type pki struct {
	ca                    *x509.CertPool
	caFile                string
	serverCert            tls.Certificate
	clientCert, clientKey string
	otherCA               string // a CA that signed neither
}

func issue(t *testing.T, dir, name string, tmpl *x509.Certificate, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey, string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := filepath.Join(dir, name+".pem"), filepath.Join(dir, name+".key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return cert, key, certFile, keyFile
}

func newPKI(t *testing.T) pki {
	t.Helper()
	dir := t.TempDir()
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "azero test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	ca, caKey, caFile, _ := issue(t, dir, "ca", caTmpl, nil, nil)
	srvTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "temporal.test"},
		DNSNames: []string{"temporal.test"}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	_, _, srvFile, srvKey := issue(t, dir, "server", srvTmpl, ca, caKey)
	cliTmpl := &x509.Certificate{SerialNumber: big.NewInt(3), Subject: pkix.Name{CommonName: "azero-worker"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	_, _, cliFile, cliKey := issue(t, dir, "client", cliTmpl, ca, caKey)
	otherTmpl := &x509.Certificate{SerialNumber: big.NewInt(4), Subject: pkix.Name{CommonName: "another CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	_, _, otherFile, _ := issue(t, dir, "other", otherTmpl, nil, nil)
	pair, err := tls.LoadX509KeyPair(srvFile, srvKey)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return pki{ca: pool, caFile: caFile, serverCert: pair, clientCert: cliFile, clientKey: cliKey, otherCA: otherFile}
}

// TestTLSConfigSpeaksMutualTLS shakes hands, for real, with a server that
// demands a client certificate from its CA, using the configuration
// ConnectOptions makes from certificate files.
func TestTLSConfigSpeaksMutualTLS(t *testing.T) {
	t.Parallel()
	p := newPKI(t)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.TLS.PeerCertificates) == 0 {
			http.Error(w, "no client certificate", http.StatusUnauthorized)
			return
		}
		io.WriteString(w, "hello "+r.TLS.PeerCertificates[0].Subject.CommonName)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are the point
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{p.serverCert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: p.ca}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "https://"))

	get := func(o ConnectOptions) (string, error) {
		cfg, err := o.tlsConfig()
		if err != nil {
			return "", err
		}
		c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg,
			DialContext: (&net.Dialer{}).DialContext}}
		defer c.CloseIdleConnections()
		// The server is named temporal.test in its certificate; it is
		// reached at 127.0.0.1.
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "https://127.0.0.1:"+port+"/", nil)
		resp, err := c.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}

	for _, c := range []struct {
		name    string
		o       ConnectOptions
		want    string // the body, or part of the error
		refused bool
	}{
		{"client certificate, our CA, the server's name", ConnectOptions{TLSCert: p.clientCert, TLSKey: p.clientKey, TLSCA: p.caFile, ServerName: "temporal.test"}, "hello azero-worker", false},
		{"no client certificate", ConnectOptions{TLSCA: p.caFile, ServerName: "temporal.test"}, "certificate", true},
		{"a CA that signed nothing here", ConnectOptions{TLSCert: p.clientCert, TLSKey: p.clientKey, TLSCA: p.otherCA, ServerName: "temporal.test"}, "certificate", true},
		{"the wrong server name", ConnectOptions{TLSCert: p.clientCert, TLSKey: p.clientKey, TLSCA: p.caFile, ServerName: "elsewhere.test"}, "elsewhere.test", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			body, err := get(c.o)
			if c.refused {
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("want a refused handshake mentioning %q, got %q, %v", c.want, body, err)
				}
				return
			}
			if err != nil || body != c.want {
				t.Fatalf("got %q, %v; want %q", body, err, c.want)
			}
		})
	}
}

func TestTLSConfigRefusesHalfASetting(t *testing.T) {
	t.Parallel()
	p := newPKI(t)
	notPEM := filepath.Join(t.TempDir(), "ca.txt")
	if err := os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		o       ConnectOptions
		wantErr string // "" for success
		tls     bool   // a TLS configuration is made
		certs   int
	}{
		{"nothing: plain connection", ConnectOptions{}, "", false, 0},
		{"an API key alone turns TLS on", ConnectOptions{APIKey: "k"}, "", true, 0},
		{"a server name alone turns TLS on", ConnectOptions{ServerName: "temporal.test"}, "", true, 0},
		{"certificate and key", ConnectOptions{TLSCert: p.clientCert, TLSKey: p.clientKey}, "", true, 1},
		{"a certificate without its key", ConnectOptions{TLSCert: p.clientCert}, "both tls_cert and tls_key", false, 0},
		{"a key without its certificate", ConnectOptions{TLSKey: p.clientKey}, "both tls_cert and tls_key", false, 0},
		{"a key that is not the certificate's", ConnectOptions{TLSCert: p.clientCert, TLSKey: p.clientCert}, "load the Temporal client certificate", false, 0},
		{"a CA file that is missing", ConnectOptions{TLSCA: filepath.Join(t.TempDir(), "nope.pem")}, "read the Temporal CA", false, 0},
		{"a CA file without a certificate", ConnectOptions{TLSCA: notPEM}, "holds no PEM certificate", false, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := c.o.tlsConfig()
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("want an error mentioning %q, got %v", c.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (cfg != nil) != c.tls {
				t.Fatalf("TLS configuration made: %v, want %v", cfg != nil, c.tls)
			}
			if cfg != nil && (len(cfg.Certificates) != c.certs || cfg.MinVersion < tls.VersionTLS12) {
				t.Errorf("config has %d certificates, min version %x", len(cfg.Certificates), cfg.MinVersion)
			}
		})
	}
}
