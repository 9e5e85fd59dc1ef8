package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/sip"
	"github.com/stacks-ils/stacks/stackstest"
	"github.com/stacks-ils/stacks/waittest"
)

// writeTestCert writes a self-signed ECDSA certificate for 127.0.0.1 and
// localhost, and its key, as PEM files under a temporary directory; it returns
// their paths and a pool that trusts the certificate.
func writeTestCert(t *testing.T) (certFile, keyFile string, roots *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "stacks SIP2 test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "sip.pem"), filepath.Join(dir, "sip-key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	roots = x509.NewCertPool()
	roots.AddCert(cert)
	return certFile, keyFile, roots
}

// tlsAddrIn returns the TLS listener's address from the start-up log.
func tlsAddrIn(t *testing.T, logs string) string {
	t.Helper()
	m := regexp.MustCompile(`tls_addr=(127\.0\.0\.1:\d+)`).FindStringSubmatch(logs)
	if m == nil {
		t.Fatalf("no TLS address in the start-up log:\n%s", logs)
	}
	return m[1]
}

// TestSIPTLS: with --sip-tls-addr, --sip-tls-cert and --sip-tls-key the
// server also serves SIP2 over TLS, on its own address: a TLS client logs in and
// is answered; a client offering less than TLS 1.2 is refused; a plain-TCP client
// on the TLS port is closed without an answer and the server goes on serving; the
// plain listener stays plain; stacks sip-client --tls works against it.
func TestSIPTLS(t *testing.T) {
	certFile, keyFile, roots := writeTestCert(t)
	addr, _, logs := sipMetricsEnv(t, sipFlags{tlsAddr: "127.0.0.1:0", tlsCert: certFile, tlsKey: keyFile})
	tlsAddr := tlsAddrIn(t, logs.String())
	if !strings.Contains(logs.String(), "tls_cert_expires=") {
		t.Errorf("the start-up log does not say which certificate and until when:\n%s", logs.String())
	}

	// login dials the TLS port, logs in and returns the connection.
	login := func(t *testing.T) (*tls.Conn, *bufio.Reader) {
		t.Helper()
		c, err := tls.Dial("tcp", tlsAddr, &tls.Config{RootCAs: roots})
		if err != nil {
			t.Fatalf("TLS dial: %v", err)
		}
		t.Cleanup(func() { c.Close() })
		if v := c.ConnectionState().Version; v < tls.VersionTLS12 {
			t.Errorf("TLS version %x, want 1.2 or later", v)
		}
		r := bufio.NewReader(c)
		if resp := exchangeRaw(t, c, r, sip.LoginMessage("kiosk", "kiosk", "")); resp != "941" {
			t.Fatalf("login over TLS answered %q, want 941", resp)
		}
		return c, r
	}

	t.Run("LoginAndPatronStatus", func(t *testing.T) {
		c, r := login(t)
		resp := exchangeRaw(t, c, r, "23001"+sip.Date(time.Now())+"AOCEN|AAP0001|AC|")
		if !strings.HasPrefix(resp, "24") || !strings.Contains(resp, "|AAP0001|") || !strings.Contains(resp, "|BLY|") {
			t.Errorf("patron status over TLS: %q, want a 24 for a valid P0001", resp)
		}
	})

	t.Run("ErrOldTLS", func(t *testing.T) {
		c, err := tls.Dial("tcp", tlsAddr, &tls.Config{RootCAs: roots, MaxVersion: tls.VersionTLS11})
		if err == nil {
			c.Close()
			t.Fatal("a TLS 1.1 client was accepted")
		}
	})

	t.Run("ErrPlainTCPOnTLSPort", func(t *testing.T) {
		c, err := net.Dial("tcp", tlsAddr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write([]byte(sip.LoginMessage("kiosk", "kiosk", "") + "\r")); err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(c)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatal("a plain-TCP client on the TLS port is still connected after 5 s")
		}
		if bytes.Contains(got, []byte("94")) {
			t.Errorf("a plain-TCP client on the TLS port was answered %q", got)
		}
		// The server is not stuck: the next TLS terminal logs in.
		login(t)
		waitForLog(t, logs, "TLS handshake failed")
	})

	t.Run("PlainListenerStaysPlain", func(t *testing.T) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if resp := exchangeRaw(t, c, bufio.NewReader(c), sip.LoginMessage("kiosk", "kiosk", "")); resp != "941" {
			t.Errorf("login on --sip-addr answered %q, want 941", resp)
		}
	})

	t.Run("SIPClient", func(t *testing.T) {
		ctx := context.Background()
		var out bytes.Buffer
		err := run(ctx, []string{"sip-client", "--addr", tlsAddr, "--tls", "--tls-ca", certFile, "--user", "kiosk", "--password", "kiosk",
			"--institution", "CEN", "patron-status:P0001"}, &out, &out)
		if err != nil {
			t.Fatalf("sip-client --tls --tls-ca: %v\n%s", err, out.String())
		}
		for _, want := range []string{"< 941", "< 24", "|AAP0001|"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("the output has no %q:\n%s", want, out.String())
			}
		}
		out.Reset()
		if err := run(ctx, []string{"sip-client", "--addr", tlsAddr, "--tls-insecure", "--user", "kiosk", "--password", "kiosk", "status"}, &out, &out); err != nil {
			t.Errorf("sip-client --tls-insecure: %v\n%s", err, out.String())
		}
		// Without the site's certificate, the system's roots do not trust it.
		out.Reset()
		err = run(ctx, []string{"sip-client", "--addr", tlsAddr, "--tls", "--user", "kiosk", "--password", "kiosk", "status"}, &out, &out)
		if err == nil || !strings.Contains(err.Error(), "certificate") {
			t.Errorf("sip-client --tls with an untrusted certificate: %v, want a certificate error", err)
		}
		// Plain sip-client on the TLS port fails, and does not wait for its
		// timeout (a minute).
		start := time.Now()
		err = run(ctx, []string{"sip-client", "--addr", tlsAddr, "--user", "kiosk", "--password", "kiosk", "--timeout", "60s", "status"}, &out, &out)
		if err == nil || time.Since(start) > 30*time.Second {
			t.Errorf("plain sip-client on the TLS port: %v after %v, want a failure at once", err, time.Since(start))
		}
		for _, args := range [][]string{
			{"--tls-ca", certFile, "--tls-insecure"},
			{"--tls-ca", filepath.Join(t.TempDir(), "missing.pem")},
			{"--tls-ca", os.Args[0]}, // not PEM
		} {
			args = append(args, "--addr", tlsAddr, "--user", "kiosk", "--password", "kiosk", "status")
			if err := run(ctx, append([]string{"sip-client"}, args...), &out, &out); exitCode(err) != 2 {
				t.Errorf("sip-client %v: %v, want a usage error", args, err)
			}
		}
	})
}

// waitForLog waits for want to appear in the log.
func waitForLog(t *testing.T, logs *stackstest.Buffer, want string) {
	t.Helper()
	if !waittest.Eventually(func() bool { return strings.Contains(logs.String(), want) }) {
		t.Errorf("no %q in the log:\n%s", want, logs.String())
	}
}

// TestSIPTLSLimits: the per-address connection cap and the login timeout hold on
// the TLS listener as on the plain one; a client that never starts its handshake
// is closed at the login timeout.
func TestSIPTLSLimits(t *testing.T) {
	certFile, keyFile, _ := writeTestCert(t)
	_, _, logs := sipMetricsEnv(t, sipFlags{tlsAddr: "127.0.0.1:0", tlsCert: certFile, tlsKey: keyFile,
		maxConnsPerAddr: 2, loginTimeout: 300 * time.Millisecond})
	tlsAddr := tlsAddrIn(t, logs.String())
	start := time.Now()
	var conns []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", tlsAddr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	closedAfter := func(c net.Conn) time.Duration {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.ReadAll(c); errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatal("the connection is still open after 5 s")
		}
		return time.Since(start)
	}
	// The third is refused as it arrives, not closed at the login timeout.
	closedAfter(conns[2])
	waitForLog(t, logs, "sip connection refused: too many connections from this address")
	if d := closedAfter(conns[0]); d < 250*time.Millisecond {
		t.Errorf("a TLS connection without a handshake was closed after %v, before --sip-login-timeout", d)
	}
}

// TestSIPTLSFlags: the TLS flags come from the environment too, and a
// certificate that cannot be used, or TLS flags that do not go together, are usage
// errors at start (exit 2, with a message), from serve itself (before it opens the
// database) as from startSIP.
func TestSIPTLSFlags(t *testing.T) {
	certFile, keyFile, _ := writeTestCert(t)
	t.Setenv("STACKS_SIP_TLS_ADDR", ":6002")
	t.Setenv("STACKS_SIP_TLS_CERT", certFile)
	t.Setenv("STACKS_SIP_TLS_KEY", keyFile)
	fs := newFlagSet("serve", "serve", "", io.Discard)
	f := registerSIPFlags(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if f.tlsAddr != ":6002" || f.tlsCert != certFile || f.tlsKey != keyFile {
		t.Errorf("from the environment: %q %q %q", f.tlsAddr, f.tlsCert, f.tlsKey)
	}
	t.Setenv("STACKS_SIP_TLS_ADDR", "")
	t.Setenv("STACKS_SIP_TLS_CERT", "")
	t.Setenv("STACKS_SIP_TLS_KEY", "")

	missing := filepath.Join(t.TempDir(), "missing.pem")
	d, err := db.Open(filepath.Join(t.TempDir(), "x.db"), db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for name, f := range map[string]sipFlags{
		"ErrMissingCert":     {tlsAddr: "127.0.0.1:0", tlsCert: missing, tlsKey: keyFile},
		"ErrKeyNotPEM":       {tlsAddr: "127.0.0.1:0", tlsCert: certFile, tlsKey: certFile},
		"ErrCertWithoutKey":  {tlsAddr: "127.0.0.1:0", tlsCert: certFile},
		"ErrAddrWithoutCert": {addr: "127.0.0.1:0", tlsAddr: "127.0.0.1:0"},
		"ErrCertWithoutAddr": {addr: "127.0.0.1:0", tlsCert: certFile, tlsKey: keyFile},
	} {
		t.Run(name, func(t *testing.T) {
			f.currency = "USD"
			_, err := startSIP(context.Background(), &f, d, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
			if exitCode(err) != 2 || !strings.Contains(err.Error(), "--sip-tls") {
				t.Errorf("%v, want a usage error naming the flag", err)
			}
		})
	}

	t.Run("ServeBadCert", func(t *testing.T) {
		var out bytes.Buffer
		dbPath := filepath.Join(t.TempDir(), "lib.db")
		err := run(context.Background(), []string{"serve", "--db", dbPath, "--addr", "127.0.0.1:0", "--metrics=false",
			"--sip-tls-addr", "127.0.0.1:0", "--sip-tls-cert", missing, "--sip-tls-key", keyFile}, &out, &out)
		if exitCode(err) != 2 || !strings.Contains(err.Error(), missing) {
			t.Errorf("serve with a missing certificate: exit %d, %v; want 2 and the file named", exitCode(err), err)
		}
		if strings.Contains(out.String(), "goroutine") {
			t.Errorf("a stack trace:\n%s", out.String())
		}
		// Refused before anything else happens: no database was created.
		if _, err := os.Stat(dbPath); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the database was created before the certificate was refused (%v)", err)
		}
	})
}
