package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
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

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/waittest"
)

// TestNoticeByEmail: a librarian sets how a patron hears of holds, returned
// copies are trapped for two patrons' holds at Check in, and the email arrives at
// the library's relay (an SMTP server in this test: STARTTLS with its own
// certificate, AUTH PLAIN) within seconds for the patron who gets email by
// default, and not for the one who chose to hear nothing of holds (she has an
// email address: without her choice she would get it); the patron page lists
// the notice as sent.
func TestNoticeByEmail(t *testing.T) {
	t.Parallel()
	relay := newMailRelay(t)
	srv := startServer(t, "--smtp-host", "127.0.0.1", "--smtp-port", strconv.Itoa(relay.port),
		"--smtp-from", "Stacks Library <library@example.org>", "--smtp-user", "stacks", "--smtp-password", "secret",
		"--smtp-tls-ca", relay.caFile, "--notices-interval", "1s")
	lib := openLibraryDB(t, srv)
	alex, casey := lib.patron("P0001"), lib.patron("P0003")
	alexPage := srv.BaseURL + "/patrons/" + strconv.FormatInt(alex.ID, 10)
	caseyPage := srv.BaseURL + "/patrons/" + strconv.FormatInt(casey.ID, 10)

	page, bctx := newBrowser(t)
	_, err := page.Goto(srv.BaseURL + "/login")
	must(t, err, "opening the login page")
	login(t, page, "desk", "desk")
	must(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/$`)), "signed in")

	// Casey's choice: not told of holds at all (she has an email address, so
	// by default she would be emailed).
	_, err = page.Goto(caseyPage)
	must(t, err, "opening Casey's page")
	label := func(name string) playwright.Locator {
		return page.GetByLabel(name, playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)})
	}
	must(t, expect.Locator(label("Hold available")).ToHaveValue("email"), "email by default")
	_, err = label("Hold available").SelectOption(playwright.SelectOptionValues{Labels: &[]string{"None"}})
	must(t, err, "choosing no hold notices")
	must(t, button(page, "Save notice choices").Click(), "saving the choices")
	must(t, expect.Locator(page.GetByText("Notice choices saved for Casey Waiting.")).ToBeVisible(), "the choices are saved")
	must(t, expect.Locator(label("Hold available")).ToHaveValue("none"), "no hold notices now")

	// I00002 goes out to Alex and Casey holds it; I00001 goes out to Casey and
	// Alex holds it (form posts of the desk's session: this test is about what
	// follows). Both come back, Casey's first.
	post := func(path string, form map[string]any) {
		t.Helper()
		r, err := bctx.Request().Post(srv.BaseURL+path, playwright.APIRequestContextPostOptions{Form: form})
		must(t, err, "POST %s", path)
		if !r.Ok() {
			t.Fatalf("POST %s %v: %d at %s", path, form, r.Status(), r.URL())
		}
	}
	post("/checkout/patron", map[string]any{"card": "P0001"})
	post("/checkout", map[string]any{"barcode": "I00002"})
	post("/checkout/patron", map[string]any{"card": "P0003"})
	post("/checkout", map[string]any{"barcode": "I00001"})
	post("/patrons/"+strconv.FormatInt(casey.ID, 10)+"/holds", map[string]any{"item": "I00002", "pickup": "CEN", "confirm": "1"})
	post("/patrons/"+strconv.FormatInt(alex.ID, 10)+"/holds", map[string]any{"item": "I00001", "pickup": "CEN", "confirm": "1"})
	for _, b := range []string{"I00001", "I00002"} {
		if got := lib.itemStatus(b); got != "on_loan" {
			t.Fatalf("%s is %s, want on loan", b, got)
		}
	}

	must(t, navLink(page, "Check in").Click(), "going to Check in")
	d := &desk{srv: srv, page: page}
	for _, b := range []string{"I00002", "I00001"} {
		d.scan(t, "Barcode", b)
		must(t, expect.Locator(page.GetByText("Hold found").First()).ToBeVisible(), "the hold on %s is found", b)
	}

	// The server's notices pass runs every second here: the email arrives. (The
	// demo library's own first notices went out when the server started.)
	holdMail := func(to, title string) []receivedMail {
		var out []receivedMail
		for _, m := range relay.mail() {
			if m.To == to && strings.Contains(m.Data, "Subject: Your hold is ready to collect") && strings.Contains(m.Data, title) {
				out = append(out, m)
			}
		}
		return out
	}
	var got receivedMail
	if !waittest.Eventually(func() bool {
		m := holdMail("alex.reader@example.org", "Pride and Prejudice")
		if len(m) > 0 {
			got = m[0]
		}
		return len(m) > 0
	}) {
		t.Fatalf("no email within %s\n--- server output ---\n%s", waittest.Limit, srv.Output())
	}
	if !got.TLS || !strings.Contains(got.Data, "Central") || !strings.Contains(got.Data, "Dear Alex Reader") {
		t.Errorf("received %+v", got)
	}

	// The relay stores a message before it answers 250, so the server may not
	// have recorded it as sent yet: reload the patron page until it has.
	row := page.Locator("table.patron-notices tbody tr").Filter(playwright.LocatorFilterOptions{HasText: "Hold available"})
	var text []string
	if !waittest.Eventually(func() bool {
		_, err = page.Goto(alexPage)
		must(t, err, "opening Alex's page")
		text, err = row.AllInnerTexts()
		must(t, err, "reading Alex's notices")
		return strings.Contains(strings.Join(text, "\n"), "Sent")
	}) {
		t.Fatalf("the hold notice is not recorded as sent within %s: %q\n--- server output ---\n%s", waittest.Limit, text, srv.Output())
	}
	must(t, expect.Locator(row).ToContainText("Your hold is ready to collect"), "the notice is listed")
	if n := len(holdMail("alex.reader@example.org", "Pride and Prejudice")); n != 1 {
		t.Errorf("%d hold emails to Alex, want 1", n)
	}
	// Casey's copy was trapped first: the pass that sent Alex's had composed
	// hers already. She chose none: her notice was closed without a message.
	var delivery string
	var messageID sql.NullInt64
	err = lib.d.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT delivery, message_id FROM notice_items
			WHERE trigger = 'hold_available' AND patron_id = ? AND title = 'Kindred'`, casey.ID).Scan(&delivery, &messageID)
	})
	if err != nil || delivery != "none" || messageID.Valid {
		t.Errorf("Casey's hold notice: %v, delivery %q, message %v; want none, no message", err, delivery, messageID)
	}
	if m := holdMail("casey.waiting@example.org", "Kindred"); len(m) != 0 {
		t.Errorf("Casey chose no hold notices but was emailed: %+v", m)
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

// TestNoticeTemplateLivePreview: an administrator types into a template's subject
// and the preview follows, without pressing Preview; nothing is saved.
func TestNoticeTemplateLivePreview(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	page, _ := newBrowser(t)
	_, err := page.Goto(srv.BaseURL + "/login")
	must(t, err, "opening the login page")
	login(t, page, "admin", "admin")
	must(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/$`)), "signed in")
	_, err = page.Goto(srv.BaseURL + "/admin/notices/templates/predue")
	must(t, err, "opening the template")
	subject := page.Locator("#subject")
	must(t, subject.Fill(""), "clearing the subject")
	must(t, subject.PressSequentially("Back soon, {{.Patron.FirstName}}", playwright.LocatorPressSequentiallyOptions{Delay: playwright.Float(20)}), "typing")
	must(t, expect.Locator(page.Locator("#notice-preview")).ToContainText("Back soon, Alex"), "the preview follows the typing")
	must(t, subject.PressSequentially(" {{.Nope"), "typing a broken action")
	must(t, expect.Locator(page.Locator("#notice-preview")).ToContainText("does not work yet"), "the preview says why it cannot be shown")
	lib := openLibraryDB(t, srv)
	var n int
	must(t, lib.d.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT count(*) FROM notice_templates`).Scan(&n)
	}), "counting saved templates")
	if n != 0 {
		t.Errorf("typing saved %d templates", n)
	}
}
