package opac_test

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/demo"
	"github.com/stacks-ils/stacks/demo/demotest"
	"github.com/stacks-ils/stacks/kit/kittest"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/opac"
	"github.com/stacks-ils/stacks/passwords"
	"github.com/stacks-ils/stacks/patrons"
)

func TestMain(m *testing.M) {
	// The race detector makes bcrypt many times slower; the demo has PIN hashes
	// made at cost 4 for tests.
	passwords.BcryptCost = 4
	os.Exit(dbtest.Main(m))
}

type testEnv struct {
	DB    *db.DB
	Clock *dbtest.Clock
	Srv   *httptest.Server
	OPAC  *opac.Server
	Circ  *circulation.Service
	// Desk is the demo's circulation account at Central, for the staff side.
	Desk stacks.Actor
}

// newEnv starts the patrons' site on a small demo library (60 titles, 20
// patrons; every patron's PIN is 1234).
func newEnv(t testing.TB) *testEnv {
	t.Helper()
	c := dbtest.NewClock(dbtest.Monday)
	d := demotest.Demo(t, demo.Options{Titles: 60, Patrons: 20}, c.Now(), db.Options{})
	d.Now = c.Now
	ctx := context.Background()
	var desk stacks.Actor
	err := d.Read(ctx, func(tx *db.Tx) error {
		var id, branch int64
		err := tx.QueryRow(`SELECT id, branch_id FROM staff_users WHERE username = 'desk'`).Scan(&id, &branch)
		desk = stacks.Actor{StaffID: id, Name: "desk", BranchID: branch}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	prefs := library.NewPreferenceCache(true)
	o := opac.New(opac.Config{DB: d, Preferences: prefs, OAIPageSize: 25})
	srv := httptest.NewServer(o)
	t.Cleanup(srv.Close)
	return &testEnv{DB: d, Clock: c, Srv: srv, OPAC: o, Circ: circulation.NewService(d, prefs), Desk: desk}
}

// client is a browser-like client: a cookie jar, no automatic redirects.
func (e *testEnv) client() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

type response = kittest.Response

func do(t testing.TB, c *http.Client, req *http.Request) response { return kittest.Do(t, c, req) }

func (e *testEnv) get(t testing.TB, c *http.Client, path string) response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, e.Srv.URL+path, nil)
	return do(t, c, req)
}

// post sends a same-origin form post, as a browser does.
func (e *testEnv) post(t testing.TB, c *http.Client, path string, form url.Values) response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.Srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", e.Srv.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	return do(t, c, req)
}

// signIn signs c in as card (PIN 1234) and fails the test if that does not work.
func (e *testEnv) signIn(t testing.TB, c *http.Client, card string) {
	t.Helper()
	r := e.post(t, c, "/signin", url.Values{"card": {card}, "pin": {"1234"}})
	if r.Status != http.StatusSeeOther || r.Location != "/account" {
		t.Fatalf("sign in as %s: %d to %q\n%s", card, r.Status, r.Location, r.Body)
	}
}

// follow GETs the page a 303 went to, with its flashes.
func (e *testEnv) follow(t testing.TB, c *http.Client, r response) response {
	t.Helper()
	if r.Status != http.StatusSeeOther {
		t.Fatalf("want a 303, got %d\n%s", r.Status, r.Body)
	}
	return e.get(t, c, r.Location)
}

func (e *testEnv) patron(t testing.TB, card string) *patrons.Patron {
	t.Helper()
	var p *patrons.Patron
	err := e.DB.Read(context.Background(), func(tx *db.Tx) (err error) {
		p, err = patrons.FindByCard(tx, card)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// checkout lends the item to the patron at the desk, confirming any block.
func (e *testEnv) checkout(t testing.TB, card, barcode string) circulation.Loan {
	t.Helper()
	p := e.patron(t, card)
	res, err := e.Circ.Checkout(context.Background(), circulation.CheckoutRequest{Actor: e.Desk, PatronID: p.ID, Barcode: barcode,
		AutoConfirm: func(circulation.Block) bool { return true }})
	if err != nil {
		t.Fatalf("checkout %s to %s: %v", barcode, card, err)
	}
	return res.Loan
}

func (e *testEnv) recordOf(t testing.TB, barcode string) int64 {
	t.Helper()
	var id int64
	err := e.DB.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT record_id FROM items WHERE barcode = ?`, barcode).Scan(&id)
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

var sqlCount = regexp.MustCompile(`sql;desc="(\d+)"`)

// statements reads the number of SQL statements from Server-Timing.
func statements(t testing.TB, r response) int {
	t.Helper()
	m := sqlCount.FindStringSubmatch(r.Header.Get("Server-Timing"))
	if m == nil {
		t.Fatalf("no sql count in Server-Timing %q", r.Header.Get("Server-Timing"))
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// text is the page's text without tags and with spaces collapsed, as a reader
// sees it.
func text(body string) string {
	body = regexp.MustCompile(`<[^>]*>`).ReplaceAllString(body, " ")
	return strings.Join(strings.Fields(strings.NewReplacer("&#39;", "'", "&amp;", "&", "&#34;", `"`, "&quot;", `"`).Replace(body)), " ")
}
