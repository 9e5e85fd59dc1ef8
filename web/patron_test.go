package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/demo"
	"github.com/stacks-ils/stacks/demo/demotest"
	"github.com/stacks-ils/stacks/patrons"
	"github.com/stacks-ils/stacks/web"
)

// newDemoEnv starts a server on a small demo library (fixture patrons P0001-P0005
// among 20; desk/desk and admin/admin), created on the clock's day.
func newDemoEnv(t *testing.T) *testEnv {
	t.Helper()
	c := dbtest.NewClock(dbtest.Monday)
	d := demotest.Demo(t, demo.Options{Titles: 50, Patrons: 20}, c.Now(), db.Options{})
	d.Now = c.Now
	w := web.New(web.Config{DB: d, CachePreferences: true})
	srv := httptest.NewServer(w)
	t.Cleanup(srv.Close)
	return &testEnv{DB: d, Clock: c, Srv: srv, Web: w}
}

// deskClient is a client signed in as desk.
func (e *testEnv) deskClient(t *testing.T) *http.Client {
	t.Helper()
	c := e.client(t)
	if r := e.login(t, c, "desk", "desk"); r.Status != http.StatusSeeOther {
		t.Fatalf("login: %d", r.Status)
	}
	return c
}

// adminClient is a client signed in as admin (an administrator).
func (e *testEnv) adminClient(t *testing.T) *http.Client {
	t.Helper()
	c := e.client(t)
	if r := e.login(t, c, "admin", "admin"); r.Status != http.StatusSeeOther {
		t.Fatalf("admin login: %d", r.Status)
	}
	return c
}

// patronPath returns the page of the patron with card.
func (e *testEnv) patronPath(t *testing.T, card string) string {
	t.Helper()
	var p *patrons.Patron
	err := e.DB.Read(context.Background(), func(tx *db.Tx) (err error) {
		p, err = patrons.FindByCard(tx, card)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return "/patrons/" + strconv.FormatInt(p.ID, 10)
}

// mustContain fails for each of wants that body lacks.
func mustContain(t *testing.T, what, body string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(body, w) {
			t.Errorf("%s lacks %q", what, w)
		}
	}
}

// fieldError returns the message shown beside the field with the given id, or "".
func fieldError(body, id string) string {
	m := regexp.MustCompile(`<p class="field-error" id="` + regexp.QuoteMeta(id) + `-error">([^<]*)</p>`).FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return m[1]
}

func TestPatronSearch(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)

	t.Run("Form", func(t *testing.T) {
		r := e.get(t, c, "/patrons")
		if r.Status != http.StatusOK {
			t.Fatalf("GET /patrons: %d", r.Status)
		}
		mustContain(t, "the patrons page", r.Body, "<h1>Patrons</h1>", `<label for="q">Search patrons</label>`,
			`name="q"`, "autofocus", ">Search</button>", `href="/patrons/new"`, "New patron", `aria-current="page">Patrons`)
	})

	t.Run("ByName", func(t *testing.T) {
		r := e.get(t, c, "/patrons?q="+url.QueryEscape("alex reader"))
		if r.Status != http.StatusOK {
			t.Fatalf("search by name: %d", r.Status)
		}
		mustContain(t, "the results", r.Body, `<a href="`+e.patronPath(t, "P0001")+`">Reader, Alex</a>`, "P0001", "Adult", "Central", "2028-11-30", "Active")
	})

	t.Run("StatusShown", func(t *testing.T) {
		r := e.get(t, c, "/patrons?q=P000")
		mustContain(t, "the results for P000", r.Body, "Expired, Dana", "Card expired", "Barred, Emery", "Blocked")
	})

	t.Run("ExactCardRedirects", func(t *testing.T) {
		for _, q := range []string{"P0002", " p0002 "} {
			r := e.get(t, c, "/patrons?q="+url.QueryEscape(q))
			if r.Status != http.StatusSeeOther || r.Location != e.patronPath(t, "P0002") {
				t.Errorf("search %q: %d to %q, want 303 to P0002's page", q, r.Status, r.Location)
			}
		}
	})

	t.Run("NoMatch", func(t *testing.T) {
		r := e.get(t, c, "/patrons?q=zzzz")
		if r.Status != http.StatusOK || !strings.Contains(r.Body, "No patron matches") {
			t.Fatalf("search without a match: %d", r.Status)
		}
	})
}

func TestPatronPage(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)

	t.Run("OK", func(t *testing.T) {
		r := e.get(t, c, e.patronPath(t, "P0002"))
		if r.Status != http.StatusOK {
			t.Fatalf("patron page: %d", r.Status)
		}
		mustContain(t, "P0002's page", r.Body, "<h1>Blake Owing</h1>", "P0002", "Adult", "Central (CEN)", "2028-11-30",
			"blake.owing@example.org", "555-0102", "Balance: <strong>12.50</strong> owed", "Overdue fine",
			`<label for="pay_amount">Amount paid</label>`, `value="12.50"`, ">Pay</button>",
			`href="`+e.patronPath(t, "P0002")+`/edit"`, ">Edit</a>", `<label for="block_note">Block note</label>`)
		if hasInlineScript(r.Body) {
			t.Error("the patron page has inline script")
		}
		// Waiving needs the permission: circulation staff without it see no Waive
		// form, but whom to ask.
		if strings.Contains(r.Body, ">Waive</button>") || strings.Contains(r.Body, "waive_amount") {
			t.Error("circulation staff without the waive permission are offered the Waive form")
		}
		r = e.get(t, e.adminClient(t), e.patronPath(t, "P0002"))
		mustContain(t, "P0002's page for an administrator", r.Body,
			`<label for="waive_amount">Amount to waive (empty: all the ticked lines owe)</label>`, "<legend>Lines to waive</legend>", `<label for="waive_reason">Reason for waiving</label>`, ">Waive</button>")
	})

	t.Run("Expired", func(t *testing.T) {
		r := e.get(t, c, e.patronPath(t, "P0004"))
		mustContain(t, "P0004's page", r.Body, "Dana Expired", `<span class="patron-badge bad">expired</span>`, "Renew it before lending", ">Renew card</button>")
	})

	t.Run("Blocked", func(t *testing.T) {
		r := e.get(t, c, e.patronPath(t, "P0005"))
		mustContain(t, "P0005's page", r.Body, `role="alert"`, "Blocked by staff:", "Repeated damage to items", ">Remove block</button>")
	})

	t.Run("NothingOwed", func(t *testing.T) {
		r := e.get(t, c, e.patronPath(t, "P0001"))
		mustContain(t, "P0001's page", r.Body, "Nothing is owed", "No fines or payments")
		if strings.Contains(r.Body, ">Pay</button>") {
			t.Error("a Pay form for a patron who owes nothing")
		}
	})

	t.Run("ErrNotFound", func(t *testing.T) {
		for _, path := range []string{"/patrons/999999", "/patrons/abc", "/patrons/-1", "/patrons/1x/edit"} {
			if r := e.get(t, c, path); r.Status != http.StatusNotFound {
				t.Errorf("GET %s: %d, want 404", path, r.Status)
			}
		}
	})

	t.Run("FewStatements", func(t *testing.T) {
		e.get(t, c, "/patrons") // the preferences are cached from here on
		for _, path := range []string{e.patronPath(t, "P0002"), "/patrons?q=reader", e.patronPath(t, "P0002") + "/edit"} {
			r := e.get(t, c, path)
			m := serverTimingRE.FindStringSubmatch(r.Header.Get("Server-Timing"))
			if m == nil {
				t.Fatalf("GET %s: Server-Timing %q", path, r.Header.Get("Server-Timing"))
			}
			// Session, user, the preferences' version, and the page's own.
			if n, _ := strconv.Atoi(m[1]); n > 11 {
				t.Errorf("GET %s ran %d SQL statements, want at most 11 (session, user, preferences' version, patron with standing and claims returned, ledger, loans, holds, branches, notices, charge types, open lines)", path, n)
			}
		}
	})
}

func TestPatronFines(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)
	admin := e.adminClient(t)
	page := e.patronPath(t, "P0002")

	// The newest of the patron's fines: the one the waivers below are meant for.
	newest := strconv.Itoa(e.count(t, `SELECT max(g.id) FROM ledger g JOIN patrons p ON p.id = g.patron_id WHERE p.card = 'P0002' AND g.kind = 'overdue'`))

	t.Run("ErrWaiveWithoutPermission", func(t *testing.T) {
		before := e.count(t, `SELECT count(*) FROM ledger WHERE kind = 'waiver'`)
		r := e.get(t, c, page)
		mustContain(t, "the desk's patron page", r.Body, "Waiving fines needs the waive permission")
		if strings.Contains(r.Body, page+`/waive"`) {
			t.Error("the patron page offers the waive form to staff without the permission")
		}
		r = e.post(t, c, page+"/waive", url.Values{"amount": {"2.50"}, "reason": {"First late return"}, "line": {newest}})
		if r.Status != http.StatusForbidden {
			t.Fatalf("waive by circulation staff without the permission: %d, want 403", r.Status)
		}
		mustContain(t, "the refused waiver", r.Body, `id="error-summary"`, "Nothing was waived", "may not waive fines")
		if got := e.count(t, `SELECT count(*) FROM ledger WHERE kind = 'waiver'`); got != before {
			t.Errorf("a refused waiver wrote a line: %d waivers, %d before", got, before)
		}
	})

	t.Run("PayPart", func(t *testing.T) {
		r := e.post(t, c, page+"/pay", url.Values{"amount": {"5.00"}, "note": {"cash"}, "method": {"cash"}})
		if r.Status != http.StatusSeeOther || r.Location != page {
			t.Fatalf("pay 5.00: %d to %q, want 303 to the patron page", r.Status, r.Location)
		}
		r = e.get(t, c, page)
		mustContain(t, "the page after paying", r.Body, "Payment of 5.00 recorded. 7.50 is still owed.",
			"Balance: <strong>7.50</strong> owed", "Payment: cash", "-5.00", "Morgan Desk", `value="7.50"`)
	})

	t.Run("ErrPayTooMuch", func(t *testing.T) {
		r := e.post(t, c, page+"/pay", url.Values{"amount": {"20.00"}, "method": {"cash"}})
		if r.Status != http.StatusUnprocessableEntity {
			t.Fatalf("pay 20.00 of 7.50: %d, want 422", r.Status)
		}
		if msg := fieldError(r.Body, "pay_amount"); !strings.Contains(msg, "owes 7.50") {
			t.Errorf("message beside the amount: %q, want what is owed", msg)
		}
		mustContain(t, "the refused payment", r.Body, `value="20.00"`, `aria-describedby="pay_amount-error"`)
	})

	t.Run("ErrPayWithoutMethod", func(t *testing.T) {
		r := e.post(t, c, page+"/pay", url.Values{"amount": {"1.00"}})
		if r.Status != http.StatusUnprocessableEntity || !strings.Contains(fieldError(r.Body, "pay_method"), "cash, card or other") {
			t.Fatalf("pay without a method: %d, want 422 with a message beside the method", r.Status)
		}
	})

	t.Run("ErrPayNotAnAmount", func(t *testing.T) {
		r := e.post(t, c, page+"/pay", url.Values{"amount": {"five"}, "method": {"cash"}})
		if r.Status != http.StatusUnprocessableEntity || fieldError(r.Body, "pay_amount") == "" {
			t.Fatalf("pay five: %d, want 422 with a message beside the amount", r.Status)
		}
	})

	t.Run("ErrWaiveWithoutReason", func(t *testing.T) {
		r := e.post(t, admin, page+"/waive", url.Values{"amount": {"2.50"}, "reason": {" "}, "line": {newest}})
		if r.Status != http.StatusUnprocessableEntity {
			t.Fatalf("waive without a reason: %d, want 422", r.Status)
		}
		if msg := fieldError(r.Body, "waive_reason"); !strings.Contains(msg, "reason") {
			t.Errorf("message beside the reason: %q", msg)
		}
		// The summary at the top names it too, and the form keeps the ticked line.
		if i, j := strings.Index(r.Body, `id="error-summary"`), strings.Index(r.Body, "<h1>"); i < 0 || i > j {
			t.Errorf("the error summary is not above the page's heading (%d, %d)", i, j)
		}
		mustContain(t, "the refused waiver", r.Body, `href="#waive_reason"`, `id="waive-line-`+newest+`" checked`, `value="2.50"`)
	})

	t.Run("ErrWaiveNoLine", func(t *testing.T) {
		r := e.post(t, admin, page+"/waive", url.Values{"amount": {"2.50"}, "reason": {"First late return"}})
		if r.Status != http.StatusUnprocessableEntity || !strings.Contains(fieldError(r.Body, "waive_lines"), "Tick the lines") {
			t.Fatalf("waive without a line: %d, want 422 with a message beside the lines", r.Status)
		}
	})

	t.Run("Waive", func(t *testing.T) {
		r := e.post(t, admin, page+"/waive", url.Values{"amount": {"2,50"}, "reason": {"First late return"}, "line": {newest}})
		if r.Status != http.StatusSeeOther {
			t.Fatalf("waive: %d", r.Status)
		}
		if got := e.count(t, `SELECT a.charge_id FROM ledger_allocations a JOIN ledger w ON w.id = a.payment_id WHERE w.kind = 'waiver'`); strconv.Itoa(got) != newest {
			t.Errorf("the waiver went to line %d, want the chosen line %s", got, newest)
		}
		r = e.get(t, admin, page)
		mustContain(t, "the page after waiving", r.Body, "Waived 2.50. 5.00 is still owed.", "Waived: First late return", "Balance: <strong>5.00</strong> owed")
	})

	t.Run("PayRest", func(t *testing.T) {
		if r := e.post(t, c, page+"/pay", url.Values{"amount": {"5"}, "method": {"card"}}); r.Status != http.StatusSeeOther {
			t.Fatalf("pay the rest: %d", r.Status)
		}
		r := e.get(t, c, page)
		mustContain(t, "the page after paying in full", r.Body, "Nothing is owed now.", "Balance: <strong>0.00</strong>")
	})
}

func TestPatronCreate(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)
	form := func(card string) url.Values {
		return url.Values{"card": {card}, "surname": {"Newcomer"}, "first_name": {"Noor"}, "email": {"noor@example.org"},
			"phone": {"555-0199"}, "address": {"1 New Street"}, "category": {"CHILD"}, "home_branch": {"EAS"}, "notes": {"Large print."}}
	}

	t.Run("Form", func(t *testing.T) {
		r := e.get(t, c, "/patrons/new?card=P7777")
		if r.Status != http.StatusOK {
			t.Fatalf("GET /patrons/new: %d", r.Status)
		}
		for _, f := range [][2]string{{"card", "Card number"}, {"surname", "Surname"}, {"first_name", "First name"}, {"email", "Email"},
			{"phone", "Phone"}, {"address", "Address"}, {"category", "Category"}, {"home_branch", "Home branch"}, {"notes", "Notes"}} {
			mustContain(t, "the new patron form", r.Body, fmt.Sprintf(`<label for="%s">%s</label>`, f[0], f[1]), fmt.Sprintf(`id="%s"`, f[0]))
		}
		mustContain(t, "the new patron form", r.Body, `value="P7777"`, `<option value="ADULT" selected>`, `<option value="CEN" selected>`, ">Create patron</button>")
	})

	t.Run("ErrDuplicateCard", func(t *testing.T) {
		r := e.post(t, c, "/patrons", form("p0001"))
		if r.Status != http.StatusUnprocessableEntity {
			t.Fatalf("duplicate card: %d, want 422", r.Status)
		}
		if msg := fieldError(r.Body, "card"); !strings.Contains(msg, "P0001") || !strings.Contains(msg, "in use") {
			t.Errorf("message beside the card: %q", msg)
		}
		mustContain(t, "the refused form", r.Body, `value="Newcomer"`, `<option value="CHILD" selected>`, `<option value="EAS" selected>`, "Large print.")
	})

	t.Run("ErrSurnameMissing", func(t *testing.T) {
		f := form("P7001")
		f.Set("surname", "")
		r := e.post(t, c, "/patrons", f)
		if r.Status != http.StatusUnprocessableEntity || fieldError(r.Body, "surname") == "" {
			t.Fatalf("no surname: %d, want 422 with a message beside the surname", r.Status)
		}
	})

	t.Run("OK", func(t *testing.T) {
		r := e.post(t, c, "/patrons", form(" p7001 "))
		if r.Status != http.StatusSeeOther || r.Location != e.patronPath(t, "P7001") {
			t.Fatalf("create: %d to %q, want 303 to the new patron's page", r.Status, r.Location)
		}
		r = e.get(t, c, r.Location)
		mustContain(t, "the new patron's page", r.Body, "Noor Newcomer is registered with card P7001, valid until 2027-11-30.",
			"<h1>Noor Newcomer</h1>", "Child", "Eastside (EAS)", "2027-11-30", "Large print.")
	})
}

func TestPatronEdit(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)
	page := e.patronPath(t, "P0003")

	r := e.get(t, c, page+"/edit")
	if r.Status != http.StatusOK {
		t.Fatalf("GET edit: %d", r.Status)
	}
	mustContain(t, "the edit form", r.Body, `action="`+page+`"`, `value="P0003"`, `value="Waiting"`, `value="casey.waiting@example.org"`, ">Save changes</button>")

	f := url.Values{"card": {"P0003"}, "surname": {"Waiting"}, "first_name": {"Casey"}, "email": {"casey@example.net"},
		"phone": {"555-0103"}, "address": {"14 Library Lane"}, "category": {"ADULT"}, "home_branch": {"WES"}, "external_id": {"ST-0003"}}
	r = e.post(t, c, page, f)
	if r.Status != http.StatusSeeOther || r.Location != page {
		t.Fatalf("save: %d to %q", r.Status, r.Location)
	}
	r = e.get(t, c, page)
	mustContain(t, "the page after editing", r.Body, "The changes to Casey Waiting are saved.", "casey@example.net", "Westside (WES)",
		"<dt>External id</dt><dd>ST-0003</dd>")
	r = e.get(t, c, page+"/edit")
	mustContain(t, "the edit form after editing", r.Body, `value="ST-0003"`)

	f.Set("email", "not an address")
	r = e.post(t, c, page, f)
	if r.Status != http.StatusUnprocessableEntity || fieldError(r.Body, "email") == "" {
		t.Fatalf("bad email: %d, want 422 with a message beside the email", r.Status)
	}
}

// TestPatronRenewCard: "Renew card" is offered when the card has expired or
// expires within 30 days; renewing says the new expiry and goes back to the page
// the form came from.
func TestPatronRenewCard(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)
	const button = ">Renew card</button>"

	t.Run("ExpiredCard", func(t *testing.T) {
		page := e.patronPath(t, "P0004")
		mustContain(t, "an expired card's page", e.get(t, c, page).Body, button)
		r := e.post(t, c, page+"/renew-card", nil)
		if r.Status != http.StatusSeeOther || r.Location != page {
			t.Fatalf("renew card: %d to %q", r.Status, r.Location)
		}
		r = e.get(t, c, page)
		mustContain(t, "the page after renewing", r.Body, "Card P0004 renewed: valid until 2027-11-30.", "2027-11-30")
		if strings.Contains(r.Body, "Card expired") || strings.Contains(r.Body, ">expired</span>") || strings.Contains(r.Body, button) {
			t.Error("the renewed card is still shown as expired, or offered for renewal")
		}
	})

	t.Run("ValidCardNotOffered", func(t *testing.T) {
		if r := e.get(t, c, e.patronPath(t, "P0001")); strings.Contains(r.Body, button) {
			t.Error("a card valid for two more years is offered for renewal")
		}
	})

	t.Run("ExpiresWithin30DaysReturnsToCheckout", func(t *testing.T) {
		page := e.patronPath(t, "P0003")
		if err := e.DB.Write(context.Background(), func(tx *db.Tx) error {
			_, err := tx.Exec(`UPDATE patrons SET expires_on = '2026-12-30' WHERE card = 'P0003'`)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		mustContain(t, "the page of a card expiring in 30 days", e.get(t, c, page).Body, button)
		r := e.post(t, c, page+"/renew-card", url.Values{"return": {"/checkout"}})
		if r.Status != http.StatusSeeOther || r.Location != "/checkout" {
			t.Fatalf("renew card from Check out: %d to %q, want 303 to /checkout", r.Status, r.Location)
		}
		mustContain(t, "Check out after renewing", e.get(t, c, "/checkout").Body, "Card P0003 renewed: valid until 2027-12-30.")
	})

	t.Run("UnsafeReturnGoesToPatron", func(t *testing.T) {
		page := e.patronPath(t, "P0002")
		for _, back := range []string{"//evil.example/", "https://evil.example/", "/\\evil.example", "javascript:alert(1)"} {
			r := e.post(t, c, page+"/renew-card", url.Values{"return": {back}})
			if r.Status != http.StatusSeeOther || r.Location != page {
				t.Errorf("return %q: %d to %q, want 303 to the patron page", back, r.Status, r.Location)
			}
		}
	})

	t.Run("ErrNotFound", func(t *testing.T) {
		if r := e.post(t, c, "/patrons/999999/renew-card", nil); r.Status != http.StatusNotFound || !strings.Contains(r.Body, "There is no patron") {
			t.Fatalf("renew an unknown patron's card: %d", r.Status)
		}
	})
}

// TestPatronRenewCardLibraryDate: the renewal counts from the library's date, not
// the server's: at 20:00 UTC on 30 November it is already 1 December in Auckland.
func TestPatronRenewCardLibraryDate(t *testing.T) {
	e := newDemoEnv(t)
	if err := e.DB.Write(context.Background(), func(tx *db.Tx) error {
		_, err := tx.Exec(`UPDATE preferences SET value = 'Pacific/Auckland' WHERE name = 'timezone'`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(10 * time.Hour)
	c := e.deskClient(t)
	page := e.patronPath(t, "P0004")
	if r := e.post(t, c, page+"/renew-card", nil); r.Status != http.StatusSeeOther {
		t.Fatalf("renew card: %d", r.Status)
	}
	mustContain(t, "the page after renewing", e.get(t, c, page).Body, "Card P0004 renewed: valid until 2027-12-01.")
}

func TestPatronBlock(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)
	page := e.patronPath(t, "P0001")

	r := e.post(t, c, page+"/block", url.Values{"note": {""}})
	if r.Status != http.StatusUnprocessableEntity || fieldError(r.Body, "block_note") == "" {
		t.Fatalf("block without a note: %d, want 422 with a message beside the note", r.Status)
	}

	r = e.post(t, c, page+"/block", url.Values{"note": {"Owes the Eastside branch a laptop."}})
	if r.Status != http.StatusSeeOther {
		t.Fatalf("block: %d", r.Status)
	}
	r = e.get(t, c, page)
	mustContain(t, "the blocked patron's page", r.Body, "The patron is blocked", "Blocked by staff:", "Owes the Eastside branch a laptop.", ">Remove block</button>")

	if r := e.post(t, c, page+"/unblock", nil); r.Status != http.StatusSeeOther {
		t.Fatalf("unblock: %d", r.Status)
	}
	r = e.get(t, c, page)
	if strings.Contains(r.Body, "Owes the Eastside branch a laptop.") || !strings.Contains(r.Body, "The block is removed.") {
		t.Error("the block note is still shown after unblocking")
	}
}

// TestPatronPIN: staff set the PIN a patron types at self-check machines; a PIN
// that SIP could not carry is refused beside the field; only its hash is kept.
func TestPatronPIN(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)
	page := e.patronPath(t, "P0004")
	id, _ := strconv.ParseInt(strings.TrimPrefix(page, "/patrons/"), 10, 64)
	hash := func() string {
		var h string
		if err := e.DB.Read(context.Background(), func(tx *db.Tx) (err error) { h, err = patrons.PINHash(tx, id); return err }); err != nil {
			t.Fatal(err)
		}
		return h
	}
	before := hash()
	for _, bad := range []string{"", "12", "12 34", "12|34"} {
		r := e.post(t, c, page+"/pin", url.Values{"pin": {bad}})
		if r.Status != http.StatusUnprocessableEntity || fieldError(r.Body, "pin_pin") == "" {
			t.Errorf("PIN %q: %d, want 422 with a message beside the PIN", bad, r.Status)
		}
	}
	if hash() != before {
		t.Fatal("a refused PIN changed the stored one")
	}
	r := e.post(t, c, page+"/pin", url.Values{"pin": {"8642"}})
	if r.Status != http.StatusSeeOther || r.Location != page {
		t.Fatalf("set PIN: %d to %q", r.Status, r.Location)
	}
	r = e.get(t, c, page)
	mustContain(t, "the page after setting a PIN", r.Body, "PIN set: the patron can use it", "has a PIN for the self-check machines")
	if h := hash(); !checkPIN(t, h, "8642") || checkPIN(t, h, "1234") || strings.Contains(h, "8642") {
		t.Errorf("stored PIN hash %q does not check as 8642 only", h)
	}
}

func TestPatronPagesNeedLogin(t *testing.T) {
	e := newDemoEnv(t)
	c := e.client(t)
	for _, path := range []string{"/patrons", "/patrons?q=reader", "/patrons/new", "/patrons/1", "/patrons/1/edit"} {
		r := e.get(t, c, path)
		if r.Status != http.StatusSeeOther || !strings.HasPrefix(r.Location, "/login?next=") {
			t.Errorf("GET %s anonymously: %d to %q, want 303 to /login", path, r.Status, r.Location)
		}
	}
	for _, path := range []string{"/patrons", "/patrons/1", "/patrons/1/pay", "/patrons/1/waive", "/patrons/1/block", "/patrons/1/unblock", "/patrons/1/renew-card"} {
		r := e.post(t, c, path, url.Values{"amount": {"12.50"}, "note": {"x"}})
		if r.Status != http.StatusSeeOther || r.Location != "/login" {
			t.Errorf("POST %s anonymously: %d to %q, want 303 to /login", path, r.Status, r.Location)
		}
	}
	// Nothing was paid.
	var bal int64
	e.DB.Read(context.Background(), func(tx *db.Tx) (err error) { bal, err = patrons.Balance(tx, 2); return err })
	if bal != 1250 {
		t.Errorf("P0002 owes %d after anonymous posts, want 1250", bal)
	}
}

// checkPIN compares a PIN with its hash on the pool, failing the test if it is busy.
func checkPIN(tb testing.TB, hash, pin string) bool {
	tb.Helper()
	ok, err := patrons.CheckPIN(context.Background(), hash, pin)
	if err != nil {
		tb.Fatalf("CheckPIN: %v", err)
	}
	return ok
}
