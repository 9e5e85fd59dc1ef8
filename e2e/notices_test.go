package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
	"github.com/playwright-community/playwright-go"
)

// TestNoticeByEmail: a librarian sets how a patron hears of holds, a returned copy
// is trapped for the patron's hold at Check in, and the email arrives at the
// library's relay (an SMTP server in this test: STARTTLS with its own
// certificate, AUTH PLAIN) within seconds; the patron page lists it as sent.
func TestNoticeByEmail(t *testing.T) {
	relay := newMailRelay(t)
	srv := startServer(t, "--smtp-host", "127.0.0.1", "--smtp-port", strconv.Itoa(relay.port),
		"--smtp-from", "Stacks Library <library@example.org>", "--smtp-user", "stacks", "--smtp-password", "secret",
		"--smtp-tls-ca", relay.caFile, "--notices-interval", "1s")
	lib := openLibraryDB(t, srv)
	alex := lib.patron("P0001")
	patronPage := srv.BaseURL + "/patrons/" + strconv.FormatInt(alex.ID, 10)

	page, bctx := newBrowser(t)
	_, err := page.Goto(srv.BaseURL + "/login")
	must(t, err, "opening the login page")
	login(t, page, "desk", "desk")
	must(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/$`)), "signed in")

	// The patron's choice: holds by email, reminders not at all.
	_, err = page.Goto(patronPage)
	must(t, err, "opening the patron page")
	label := func(name string) playwright.Locator {
		return page.GetByLabel(name, playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)})
	}
	_, err = label("Hold available").SelectOption(playwright.SelectOptionValues{Labels: &[]string{"Email"}})
	must(t, err, "choosing email for holds")
	_, err = label("Due soon").SelectOption(playwright.SelectOptionValues{Labels: &[]string{"None"}})
	must(t, err, "choosing no reminders")
	must(t, button(page, "Save notice choices").Click(), "saving the choices")
	must(t, expect.Locator(page.GetByText("Notice choices saved for Alex Reader.")).ToBeVisible(), "the choices are saved")
	must(t, expect.Locator(label("Due soon")).ToHaveValue("none"), "no reminders now")

	// I00001 goes out to Casey, Alex holds it (form posts of the desk's session:
	// this test is about what follows), and it comes back.
	post := func(path string, form map[string]any) {
		t.Helper()
		r, err := bctx.Request().Post(srv.BaseURL+path, playwright.APIRequestContextPostOptions{Form: form})
		must(t, err, "POST %s", path)
		if !r.Ok() {
			t.Fatalf("POST %s %v: %d at %s", path, form, r.Status(), r.URL())
		}
	}
	post("/checkout/patron", map[string]any{"card": "P0003"})
	post("/checkout", map[string]any{"barcode": "I00001"})
	post("/patrons/"+strconv.FormatInt(alex.ID, 10)+"/holds", map[string]any{"item": "I00001", "pickup": "CEN", "confirm": "1"})
	if got := lib.itemStatus("I00001"); got != "on_loan" {
		t.Fatalf("I00001 is %s, want on loan", got)
	}

	must(t, navLink(page, "Check in").Click(), "going to Check in")
	d := &desk{srv: srv, page: page}
	d.scan(t, "Barcode", "I00001")
	must(t, expect.Locator(page.GetByText("Hold found").First()).ToBeVisible(), "the hold is found")

	// The server's notices pass runs every second here: the email arrives. (The
	// demo library's own first notices went out when the server started.)
	holdMail := func() []receivedMail {
		var out []receivedMail
		for _, m := range relay.mail() {
			if m.To == "alex.reader@example.org" && strings.Contains(m.Data, "Subject: Your hold is ready to collect") {
				out = append(out, m)
			}
		}
		return out
	}
	var got receivedMail
	deadline := time.Now().Add(20 * time.Second)
	for {
		if m := holdMail(); len(m) > 0 {
			got = m[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no email within 20 s\n--- server output ---\n%s", srv.Output())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !got.TLS || !strings.Contains(got.Data, "Central") || !strings.Contains(got.Data, "Dear Alex Reader") {
		t.Errorf("received %+v", got)
	}

	_, err = page.Goto(patronPage)
	must(t, err, "opening the patron page again")
	row := page.Locator("table.patron-notices tbody tr").Filter(playwright.LocatorFilterOptions{HasText: "Hold available"})
	must(t, expect.Locator(row).ToContainText("Your hold is ready to collect"), "the notice is listed")
	must(t, expect.Locator(row).ToContainText("Sent"), "as sent")
	if n := len(holdMail()); n != 1 {
		t.Errorf("%d hold emails, want 1", n)
	}
}

// mailRelay is an SMTP server for the test.
type mailRelay struct {
	port   int
	caFile string

	mu       sync.Mutex
	received []receivedMail
}

type receivedMail struct {
	To, Data string
	TLS      bool
}

func (r *mailRelay) mail() []receivedMail {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]receivedMail(nil), r.received...)
}

func newMailRelay(t *testing.T) *mailRelay {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:   time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	r := &mailRelay{caFile: filepath.Join(t.TempDir(), "relay-ca.pem")}
	if err := os.WriteFile(r.caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	s := smtp.NewServer(relayBackend{r})
	s.Domain = "localhost"
	s.TLSConfig = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, MinVersion: tls.VersionTLS12}
	s.ReadTimeout, s.WriteTimeout = 10*time.Second, 10*time.Second
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.port = ln.Addr().(*net.TCPAddr).Port
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return r
}

type relayBackend struct{ r *mailRelay }

func (b relayBackend) NewSession(c *smtp.Conn) (smtp.Session, error) {
	return &relaySession{r: b.r, c: c}, nil
}

type relaySession struct {
	r      *mailRelay
	c      *smtp.Conn
	authed bool
	to     []string
}

func (s *relaySession) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *relaySession) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != "stacks" || pass != "secret" {
			return errors.New("invalid credentials")
		}
		s.authed = true
		return nil
	}), nil
}

func (s *relaySession) Mail(string, *smtp.MailOptions) error {
	if !s.authed {
		return smtp.ErrAuthRequired
	}
	return nil
}

func (s *relaySession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.to = append(s.to, to)
	return nil
}

func (s *relaySession) Data(rd io.Reader) error {
	b, err := io.ReadAll(rd)
	if err != nil {
		return err
	}
	_, isTLS := s.c.TLSConnectionState()
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	for _, to := range s.to {
		s.r.received = append(s.r.received, receivedMail{To: to, Data: string(b), TLS: isTLS})
	}
	return nil
}

func (s *relaySession) Reset()        { s.to = nil }
func (s *relaySession) Logout() error { return nil }
