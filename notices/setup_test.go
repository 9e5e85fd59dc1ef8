package notices_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/notices"
)

// testNow is the day after dbtest.Monday, a Tuesday morning.
var testNow = dbtest.Monday.AddDate(0, 0, 1)

func TestMain(m *testing.M) { os.Exit(dbtest.Main(m)) }

// lib is a small library built by hand: branch CEN (closed Sundays, closes at
// 20:00), category ADULT, item type BOOK, one circulation rule, a desk account.
type lib struct {
	tb    testing.TB
	d     *db.DB
	clock *dbtest.Clock
	n     int
}

func newLib(tb testing.TB, tz string) *lib {
	tb.Helper()
	// NORMAL: the tests need no power-cut safety, and fsyncs dominate their time.
	d := dbtest.Copy(tb, "notices-lib-"+tz, func(d *db.DB) error { return buildLib(d, tz) }, db.Options{Synchronous: "NORMAL"})
	c := dbtest.NewClock(testNow)
	d.Now = c.Now
	return &lib{tb: tb, d: d, clock: c}
}

// buildLib fills a migrated database d with newLib's library.
func buildLib(d *db.DB, tz string) error {
	return d.Write(context.Background(), func(tx *db.Tx) error {
		for _, q := range []struct {
			sql  string
			args []any
		}{
			{`UPDATE preferences SET value = ? WHERE name = 'timezone'`, []any{tz}},
			{`INSERT INTO branches (id, code, name, closed_weekdays, closes_at) VALUES (1, 'CEN', 'Central', '0', '20:00')`, nil},
			{`INSERT INTO patron_categories (id, code, name) VALUES (1, 'ADULT', 'Adult')`, nil},
			{`INSERT INTO item_types (id, code, name) VALUES (1, 'BOOK', 'Book')`, nil},
			{`INSERT INTO circ_rules (loan_period, max_loans, renewals, hold_pickup_days) VALUES (21, 10, 2, 7)`, nil},
			{`INSERT INTO staff_users (id, username, display_name, password_hash, role, branch_id, created_at)
				VALUES (1, 'desk', 'Desk', 'x', 'circulation', 1, '2026-01-01T00:00:00Z')`, nil},
		} {
			if _, err := tx.Exec(q.sql, q.args...); err != nil {
				return fmt.Errorf("%s: %w", q.sql, err)
			}
		}
		return nil
	})
}

func (l *lib) exec(q string, args ...any) {
	l.tb.Helper()
	err := l.d.Write(context.Background(), func(tx *db.Tx) error {
		_, err := tx.Exec(q, args...)
		return err
	})
	if err != nil {
		l.tb.Fatalf("%s: %v", q, err)
	}
}

func (l *lib) queryInt(q string, args ...any) int64 {
	l.tb.Helper()
	var n int64
	err := l.d.Read(context.Background(), func(tx *db.Tx) error { return tx.QueryRow(q, args...).Scan(&n) })
	if err != nil {
		l.tb.Fatalf("%s: %v", q, err)
	}
	return n
}

// patron adds a patron and returns its id.
func (l *lib) patron(card, first, surname, email string) int64 {
	l.tb.Helper()
	var id int64
	err := l.d.Write(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(`INSERT INTO patrons (card, surname, first_name, email, category_id, home_branch_id, expires_on, created_at)
			VALUES (?, ?, ?, ?, 1, 1, '2030-01-01', '2026-01-01T00:00:00Z') RETURNING id`, card, surname, first, email).Scan(&id)
	})
	if err != nil {
		l.tb.Fatal(err)
	}
	return id
}

// item adds a title with one copy and returns the item's and record's ids.
func (l *lib) item(title string) (itemID, recordID int64) {
	l.tb.Helper()
	l.n++
	err := l.d.Write(context.Background(), func(tx *db.Tx) error {
		if err := tx.QueryRow(`INSERT INTO records (title, author, created_at, updated_at) VALUES (?, 'Author', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z') RETURNING id`, title).Scan(&recordID); err != nil {
			return err
		}
		return tx.QueryRow(`INSERT INTO items (barcode, record_id, home_branch_id, current_branch_id, item_type_id, created_at, updated_at)
			VALUES (?, ?, 1, 1, 1, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z') RETURNING id`,
			"B"+strings.Repeat("0", 5-len(itoa(l.n)))+itoa(l.n), recordID).Scan(&itemID)
	})
	if err != nil {
		l.tb.Fatal(err)
	}
	return itemID, recordID
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// loan lends a new title to patron, due at due; it returns the loan id.
func (l *lib) loan(patronID int64, title string, due time.Time) int64 {
	l.tb.Helper()
	itemID, _ := l.item(title)
	l.exec(`UPDATE items SET status = 'on_loan' WHERE id = ?`, itemID)
	var id int64
	err := l.d.Write(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(`INSERT INTO loans (item_id, patron_id, branch_id, issued_at, due_at) VALUES (?, ?, 1, ?, ?) RETURNING id`,
			itemID, patronID, db.FormatTime(due.AddDate(0, 0, -21)), db.FormatTime(due)).Scan(&id)
	})
	if err != nil {
		l.tb.Fatal(err)
	}
	return id
}

func (l *lib) run(opt notices.RunOptions) notices.RunResult {
	l.tb.Helper()
	res, err := notices.RunDaily(context.Background(), l.d, opt)
	if err != nil {
		l.tb.Fatal(err)
	}
	return res
}

// items returns "trigger/level" of every notice item of a patron, by id.
func (l *lib) items(patronID int64) []string {
	l.tb.Helper()
	var out []string
	err := l.d.Read(context.Background(), func(tx *db.Tx) error {
		rows, err := tx.Query(`SELECT trigger, level, title FROM notice_items WHERE patron_id = ? ORDER BY id`, patronID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var t, title string
			var lv int
			if err := rows.Scan(&t, &lv, &title); err != nil {
				return err
			}
			out = append(out, t+"/"+itoa(lv)+"/"+title)
		}
		return rows.Err()
	})
	if err != nil {
		l.tb.Fatal(err)
	}
	return out
}

func (l *lib) messages(f notices.Filter) []notices.Message {
	l.tb.Helper()
	var ms []notices.Message
	err := l.d.Read(context.Background(), func(tx *db.Tx) (err error) {
		ms, err = notices.ListMessages(tx, f)
		return err
	})
	if err != nil {
		l.tb.Fatal(err)
	}
	return ms
}

// day returns 10:00 on a day in loc.
func at(loc *time.Location, y int, m time.Month, d, h, min int) time.Time {
	return time.Date(y, m, d, h, min, 0, 0, loc)
}

// relay is an SMTP server in the test process: STARTTLS with a certificate made
// for the test, AUTH PLAIN required (user stacks, password secret), and a
// number of 451 refusals before it accepts.
type relay struct {
	addr string
	port int
	tls  *tls.Config // for the client: trusts the server's certificate

	mu     sync.Mutex
	refuse int
	// code is the reply to a refused message: 451 (try again later) unless set.
	code int
	// onData, if set, runs as each message's data arrives, before it is stored
	// and answered (a slow relay).
	onData   func()
	received []received
}

type received struct {
	From, To string
	Data     string
	TLS      bool
}

func newRelay(tb testing.TB) *relay {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "localhost"},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)

	r := &relay{tls: &tls.Config{RootCAs: pool, ServerName: "localhost", MinVersion: tls.VersionTLS12}}
	s := smtp.NewServer(&backend{r: r})
	s.Domain = "localhost"
	s.TLSConfig = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, MinVersion: tls.VersionTLS12}
	s.AllowInsecureAuth = false
	s.ReadTimeout, s.WriteTimeout = 10*time.Second, 10*time.Second
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	r.addr = ln.Addr().String()
	r.port = ln.Addr().(*net.TCPAddr).Port
	go s.Serve(ln)
	tb.Cleanup(func() { s.Close() })
	return r
}

func (r *relay) config() notices.SMTPConfig {
	return notices.SMTPConfig{Host: "127.0.0.1", Port: r.port, Username: "stacks", Password: "secret",
		From: "Stacks Library <library@example.org>", StartTLS: "mandatory", TLSConfig: r.tls, Timeout: 5 * time.Second}
}

func (r *relay) mail() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.received...)
}

type backend struct{ r *relay }

func (b *backend) NewSession(c *smtp.Conn) (smtp.Session, error) {
	return &session{r: b.r, c: c}, nil
}

type session struct {
	r      *relay
	c      *smtp.Conn
	authed bool
	from   string
	to     []string
}

func (s *session) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *session) Auth(mech string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(identity, username, password string) error {
		if username != "stacks" || password != "secret" {
			return &smtp.SMTPError{Code: 535, EnhancedCode: smtp.EnhancedCode{5, 7, 8}, Message: "Authentication credentials invalid"}
		}
		s.authed = true
		return nil
	}), nil
}

func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	if !s.authed {
		return smtp.ErrAuthRequired
	}
	s.from = from
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.to = append(s.to, to)
	return nil
}

func (s *session) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.r.mu.Lock()
	onData := s.r.onData
	s.r.mu.Unlock()
	if onData != nil {
		onData()
	}
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	if s.r.refuse > 0 {
		s.r.refuse--
		if s.r.code >= 500 {
			return &smtp.SMTPError{Code: s.r.code, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "No such user here"}
		}
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "Try again later"}
	}
	_, isTLS := s.c.TLSConnectionState()
	for _, to := range s.to {
		s.r.received = append(s.r.received, received{From: s.from, To: to, Data: string(b), TLS: isTLS})
	}
	return nil
}

func (s *session) Reset()        { s.from, s.to = "", nil }
func (s *session) Logout() error { return nil }
