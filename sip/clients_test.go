package sip_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/sip"
)

// TestClientTranscripts replays the sessions of real SIP2 clients in
// testdata/clients (one file per client and mode: the bytes each client's published
// code sends, its own checksums and line terminator included; the head of each file
// names the source) against the small demo library, once over plain TCP and once
// over TLS, each on a fresh copy of the library, and compares every answer byte for
// byte. The format is TestGolden's, with "#! terminator" for a client that ends its
// messages with CR LF or LF. -update rewrites the answers from the TCP run; the TLS
// run must then give the same bytes.
func TestClientTranscripts(t *testing.T) {
	files, err := filepath.Glob("testdata/clients/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no transcripts in testdata/clients")
	}
	cfg := clientTLSConfig(t)
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txt")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// In order: with -update the TCP run rewrites the file that the TLS run
			// then checks.
			t.Run("TCP", func(t *testing.T) {
				e := newEnvWith(t, envOptions{demo: smallDemo, config: sip.Config{SortBins: goldenBins}})
				applySettings(t, e, file)
				replay(t, e, file)
			})
			t.Run("TLS", func(t *testing.T) {
				// Registered before the server's cleanup, so it runs after it: the
				// shutdown ends this Serve too.
				served := make(chan error, 1)
				started := false
				t.Cleanup(func() {
					if !started {
						return
					}
					select {
					case err := <-served:
						if !errors.Is(err, sip.ErrServerClosed) {
							t.Errorf("Serve on the TLS listener returned %v, want ErrServerClosed", err)
						}
					case <-time.After(10 * time.Second):
						t.Error("Serve on the TLS listener did not return after the shutdown")
					}
				})
				e := newEnvWith(t, envOptions{demo: smallDemo, config: sip.Config{SortBins: goldenBins}})
				applySettings(t, e, file)
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				started = true
				go func() { served <- e.srv.Serve(tls.NewListener(ln, cfg.server)) }()
				replayOver(t, e, file, func() (net.Conn, error) {
					c, err := tls.Dial("tcp", ln.Addr().String(), cfg.client)
					if err != nil {
						return nil, err
					}
					if v := c.ConnectionState().Version; v < tls.VersionTLS12 {
						t.Errorf("TLS version %x, want 1.2 or later", v)
					}
					return c, nil
				}, false)
			})
		})
	}
}

// clientTLS is a server certificate for 127.0.0.1 and a client configuration that
// trusts it.
type clientTLS struct {
	server, client *tls.Config
}

// clientTLSConfig makes a self-signed ECDSA certificate for 127.0.0.1, as a library
// would put in front of its self-check terminals.
func clientTLSConfig(t *testing.T) clientTLS {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "stacks SIP2 client transcripts"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(cert)
	return clientTLS{
		server: &tls.Config{
			Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}},
			MinVersion:   tls.VersionTLS12,
		},
		client: &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"},
	}
}
