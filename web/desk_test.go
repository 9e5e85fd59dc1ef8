package web_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/db"
)

// scan posts what the desk script posts: the form with an HX-Request header.
func (e *testEnv) scan(t *testing.T, c *http.Client, path string, form url.Values) response {
	t.Helper()
	req := e.formRequest(path, form)
	req.Header.Set("HX-Request", "true")
	return do(t, c, req)
}

var rowRE = regexp.MustCompile(`^<tr class="scan scan-([a-z]+)[^"]*" data-outcome="([a-z]+)" data-scan="([^"]*)"`)

// row checks that a desk answer starts with the scan's row, of the kind wanted.
func row(t *testing.T, r response, status int, kind, scanned string) {
	t.Helper()
	m := rowRE.FindStringSubmatch(r.Body)
	if r.Status != status || m == nil || m[2] != kind || m[3] != scanned {
		t.Fatalf("want a %d answer starting with a %s row for %s; got %d:\n%.600s", status, kind, scanned, r.Status, r.Body)
	}
	if strings.Contains(r.Body, "<html") || strings.Contains(r.Body, "<nav") {
		t.Fatalf("the desk script got a whole page, not a fragment")
	}
}

func (e *testEnv) loans(t *testing.T, card string) int {
	return e.count(t, `SELECT count(*) FROM loans l JOIN patrons p ON p.id = l.patron_id WHERE p.card = '`+card+`' AND l.returned_at IS NULL`)
}

func (e *testEnv) overrides(t *testing.T) int {
	return e.count(t, `SELECT count(*) FROM audit_log WHERE action = 'checkout.override'`)
}

// TestDeskScriptCheckout drives Check out as the desk script does: one scan field,
// the server deciding what each scan is.
func TestDeskScriptCheckout(t *testing.T) {
	e := newDemoEnv(t)
	c := e.client(t)
	e.login(t, c, "desk", "desk")

	t.Run("ItemBeforeCard", func(t *testing.T) {
		r := e.scan(t, c, "/checkout/scan", url.Values{"scan": {"I00001"}})
		row(t, r, http.StatusUnprocessableEntity, "refused", "I00001")
		if !strings.Contains(r.Body, "is an item&#39;s barcode") || !strings.Contains(r.Body, `data-sound="error"`) {
			t.Errorf("an item scanned before a card is not explained with an error sound:\n%s", r.Body)
		}
		if e.loans(t, "P0001") != 0 {
			t.Error("a loan was made without a patron")
		}
	})

	t.Run("CardOpensVisit", func(t *testing.T) {
		r := e.scan(t, c, "/checkout/scan", url.Values{"scan": {"P0001"}})
		row(t, r, http.StatusOK, "info", "P0001")
		for _, want := range []string{`data-new-visit="true"`, "Now serving Alex Reader", `id="desk-patron" hx-swap-oob="true"`,
			`<label id="scan-label" for="scan" hx-swap-oob="true">Barcode</label>`, "Other loans (0)"} {
			if !strings.Contains(r.Body, want) {
				t.Errorf("the answer lacks %s", want)
			}
		}
	})

	t.Run("CheckoutDone", func(t *testing.T) {
		r := e.scan(t, c, "/checkout/scan", url.Values{"scan": {"I00001"}})
		row(t, r, http.StatusOK, "done", "I00001")
		if !strings.Contains(r.Body, "Pride and Prejudice") || !strings.Contains(r.Body, "2026-12-21 20:00") {
			t.Errorf("the row lacks the title and due date:\n%s", r.Body)
		}
		if e.loans(t, "P0001") != 1 {
			t.Error("I00001 is not on loan to P0001")
		}
		// One request where the form post took two (the post and the page it
		// redirected to, 11 + 5): session and user (2), the preferences'
		// version (1), the checkout (8), the patron with their standing and
		// their loans for the page's regions (2).
		if n := sqlCount(t, r); n > 13 {
			t.Errorf("a scanned checkout ran %d SQL statements, want at most 13", n)
		}
	})

	t.Run("RescanSameDayRefused", func(t *testing.T) {
		// The day it was lent (scanned twice): renewing would not move the due
		// date, so the scan is refused at once, by that reason, with no question
		// to hold the queue.
		r := e.scan(t, c, "/checkout/scan", url.Values{"scan": {"I00001"}})
		row(t, r, http.StatusUnprocessableEntity, "refused", "I00001")
		mustContain(t, "a second scan of a loan made today", r.Body, "The due date would not move")
	})

	t.Run("RenewalOfferThenCancel", func(t *testing.T) {
		// A loan due a week sooner (lent a week ago): the rescan offers a
		// renewal, which would move the due date.
		var due string
		if err := e.DB.Read(context.Background(), func(tx *db.Tx) error {
			return tx.QueryRow(`SELECT l.due_at FROM loans l JOIN items i ON i.id = l.item_id WHERE i.barcode = 'I00001' AND l.returned_at IS NULL`).Scan(&due)
		}); err != nil {
			t.Fatal(err)
		}
		sooner, err := db.ParseTime(due)
		if err != nil {
			t.Fatal(err)
		}
		const setDue = `UPDATE loans SET due_at = ? WHERE returned_at IS NULL AND item_id = (SELECT id FROM items WHERE barcode = 'I00001')`
		e.exec(t, setDue, db.FormatTime(sooner.AddDate(0, 0, -7)))
		defer e.exec(t, setDue, due)
		r := e.scan(t, c, "/checkout/scan", url.Values{"scan": {"I00001"}})
		row(t, r, http.StatusConflict, "decision", "I00001")
		if !strings.Contains(r.Body, "Renew it?") || !strings.Contains(r.Body, `aria-keyshortcuts="Alt+C"`) || strings.Contains(r.Body, "autofocus") {
			t.Errorf("the renewal offer lacks its shortcut, or a button takes focus:\n%s", r.Body)
		}
		r = e.scan(t, c, "/checkout/cancel", url.Values{"barcode": {"I00001"}})
		row(t, r, http.StatusOK, "cancelled", "I00001")
	})

	t.Run("UnknownBarcode", func(t *testing.T) {
		r := e.scan(t, c, "/checkout/scan", url.Values{"scan": {"NOPE42"}})
		row(t, r, http.StatusUnprocessableEntity, "refused", "NOPE42")
		if !strings.Contains(r.Body, "No item or patron has barcode NOPE42") || !strings.Contains(r.Body, "banner-error") {
			t.Errorf("no refusal banner for an unknown barcode:\n%s", r.Body)
		}
	})

	t.Run("PatronCardSwitchesVisit", func(t *testing.T) {
		r := e.scan(t, c, "/checkout/scan", url.Values{"scan": {"P0002"}})
		row(t, r, http.StatusOK, "info", "P0002")
		if !strings.Contains(r.Body, `data-new-visit="true"`) || !strings.Contains(r.Body, "now serving Blake Owing") || strings.Contains(r.Body, "Alex Reader") {
			t.Fatalf("a patron card in the Barcode field does not open that patron's visit (or shows the previous patron):\n%s", r.Body)
		}
		r = e.get(t, c, "/checkout")
		if !strings.Contains(r.Body, "Blake Owing") || strings.Contains(r.Body, "Alex Reader") {
			t.Error("the page still shows the previous patron")
		}
	})

	t.Run("FinesDecisionThenConfirm", func(t *testing.T) {
		before := e.overrides(t)
		r := e.scan(t, c, "/checkout/scan", url.Values{"scan": {"I00006"}})
		row(t, r, http.StatusConflict, "decision", "I00006")
		if !strings.Contains(r.Body, "owes 12.50 in fines") || !strings.Contains(r.Body, `data-sound="question"`) {
			t.Errorf("the fines question is not in its row:\n%s", r.Body)
		}
		if e.overrides(t) != before || e.loans(t, "P0002") != 0 {
			t.Fatal("asking wrote an override or a loan")
		}
		r = e.scan(t, c, "/checkout", url.Values{"barcode": {"I00006"}, "confirm": {"fines"}})
		row(t, r, http.StatusOK, "done", "I00006")
		if e.overrides(t) != before+1 || e.loans(t, "P0002") != 1 {
			t.Error("the confirmed checkout is not recorded once")
		}
		r = e.scan(t, c, "/checkout/scan", url.Values{"scan": {"I00007"}})
		row(t, r, http.StatusOK, "done", "I00007")
		if !strings.Contains(r.Body, "(confirmed for this visit)") {
			t.Error("the header does not say the fines were confirmed for this visit")
		}
	})

	t.Run("RenewOtherLoan", func(t *testing.T) {
		var loanID int64
		e.DB.Read(context.Background(), func(tx *db.Tx) error {
			return tx.QueryRow(`SELECT l.id FROM loans l JOIN items i ON i.id = l.item_id WHERE i.barcode = 'I00006' AND l.returned_at IS NULL`).Scan(&loanID)
		})
		e.Clock.Advance(24 * time.Hour)
		e.login(t, c, "desk", "desk")
		r := e.scan(t, c, "/checkout/scan", url.Values{"scan": {"P0002"}})
		row(t, r, http.StatusOK, "info", "P0002")
		r = e.scan(t, c, "/checkout/renew", url.Values{"loan": {strconv.FormatInt(loanID, 10)}})
		row(t, r, http.StatusOK, "done", "I00006")
		if !strings.Contains(r.Body, "2026-12-22 20:00") || !strings.Contains(r.Body, `<span class="tag">Renewed</span>`) {
			t.Errorf("the renewal's row lacks its new due date:\n%s", r.Body)
		}
		// The renewed loan joins this visit's list (and its slip); I00007 stays
		// among the other loans.
		r = e.get(t, c, "/checkout")
		if !strings.Contains(r.Body, "Other loans (1)") || !strings.Contains(r.Body, "Renewed") {
			t.Error("the other loans of the patron are not listed at Check out, or the renewal is not in the visit")
		}
		if r := e.get(t, c, "/checkout/slip"); !strings.Contains(r.Body, "Renewed (1 of") {
			t.Error("the due slip does not show the renewal")
		}
	})

	t.Run("ExpiredCardRenewOnTheSpot", func(t *testing.T) {
		e.scan(t, c, "/checkout/scan", url.Values{"scan": {"P0004"}})
		r := e.scan(t, c, "/checkout/scan", url.Values{"scan": {"I00002"}})
		row(t, r, http.StatusUnprocessableEntity, "refused", "I00002")
		if !strings.Contains(r.Body, `action="/checkout/renew-card"`) || !strings.Contains(r.Body, "Renew card") {
			t.Fatalf("an expired card's refusal offers no way out:\n%s", r.Body)
		}
		r = e.scan(t, c, "/checkout/renew-card", nil)
		row(t, r, http.StatusOK, "info", "P0004")
		r = e.scan(t, c, "/checkout/scan", url.Values{"scan": {"I00002"}})
		row(t, r, http.StatusOK, "done", "I00002")
	})

	t.Run("FinishEndsVisit", func(t *testing.T) {
		r := e.scan(t, c, "/checkout/done", nil)
		row(t, r, http.StatusOK, "info", "Finish")
		if !strings.Contains(r.Body, "Finished. Scan the next patron") || strings.Contains(r.Body, "Dana Expired") || !strings.Contains(r.Body, `data-new-visit="true"`) ||
			!strings.Contains(r.Body, `for="scan" hx-swap-oob="true">Card number</label>`) {
			t.Errorf("Finish does not end the visit:\n%s", r.Body)
		}
		r = e.scan(t, c, "/checkout/scan", url.Values{"scan": {"I00003"}})
		row(t, r, http.StatusUnprocessableEntity, "refused", "I00003")
	})

	t.Run("IdleVisitEnds", func(t *testing.T) {
		e.scan(t, c, "/checkout/scan", url.Values{"scan": {"P0001"}})
		e.Clock.Advance(6 * time.Minute)
		r := e.scan(t, c, "/checkout/scan", url.Values{"scan": {"I00004"}})
		row(t, r, http.StatusUnprocessableEntity, "refused", "I00004")
		if !strings.Contains(r.Body, "ended after 5 minutes without activity") || strings.Contains(r.Body, "Alex Reader") {
			t.Fatalf("an idle visit did not end, or the next scan shows the previous patron:\n%s", r.Body)
		}
		if r := e.get(t, c, "/checkout"); strings.Contains(r.Body, "Alex Reader") {
			t.Error("the page still shows the patron of an idle visit")
		}
		// A visit with scans never idles out.
		e.scan(t, c, "/checkout/scan", url.Values{"scan": {"P0001"}})
		for i := 0; i < 4; i++ {
			e.Clock.Advance(2 * time.Minute)
			e.login(t, c, "desk", "desk")
			if r := e.scan(t, c, "/checkout/cancel", url.Values{"barcode": {"X"}}); r.Status != http.StatusOK {
				t.Fatal(r.Status)
			}
			if r := e.get(t, c, "/checkout"); !strings.Contains(r.Body, "Alex Reader") {
				t.Fatalf("a visit active every 2 minutes ended after %d", 2*(i+1))
			}
		}
	})
}

// TestDeskScriptCheckin drives Check in as the desk script does.
func TestDeskScriptCheckin(t *testing.T) {
	e := newDemoEnv(t)
	c := e.client(t)
	e.login(t, c, "desk", "desk")
	e.post(t, c, "/checkout/patron", url.Values{"card": {"P0001"}})
	e.post(t, c, "/checkout", url.Values{"barcode": {"I00003"}})

	r := e.scan(t, c, "/checkin", url.Values{"barcode": {"I00003"}})
	row(t, r, http.StatusOK, "done", "I00003")
	// Session and user (2), the preferences' version (1: several servers may
	// share the database), the checkin (5), saving the session (this first
	// checkin names the session's list): nothing more for the answer.
	if n := sqlCount(t, r); n > 9 {
		t.Errorf("a scanned checkin ran %d SQL statements, want at most 9", n)
	}
	if !strings.Contains(r.Body, "Returned from Alex Reader") || strings.Contains(r.Body, "data-sound") {
		t.Errorf("a plain return:\n%s", r.Body)
	}

	r = e.scan(t, c, "/checkin", url.Values{"barcode": {"P0003"}})
	row(t, r, http.StatusUnprocessableEntity, "refused", "P0003")
	if !strings.Contains(r.Body, "That is a patron card: Casey Waiting (P0003)") || !strings.Contains(r.Body, "Check out to Casey Waiting") {
		t.Errorf("a patron card at Check in is not recognised:\n%s", r.Body)
	}

	r = e.scan(t, c, "/checkin", url.Values{"barcode": {"BAD0001"}})
	row(t, r, http.StatusNotFound, "refused", "BAD0001")
	if !strings.Contains(r.Body, `data-sound="error"`) || !strings.Contains(r.Body, "Not checked in: BAD0001") {
		t.Errorf("an unknown barcode has no error row and banner:\n%s", r.Body)
	}

	// The page lists each item once, the latest return first.
	for i := 0; i < 3; i++ {
		e.scan(t, c, "/checkin", url.Values{"barcode": {"I00004"}})
	}
	r = e.get(t, c, "/checkin")
	if n := strings.Count(r.Body, "<td>I00004</td>"); n != 1 {
		t.Errorf("I00004 returned three times is listed %d times, want once", n)
	}
	if strings.Contains(r.Body, "Not checked in") || strings.Contains(r.Body, `class="banner`) {
		t.Error("a plain visit to Check in replays an earlier scan's banner")
	}
	// The receipt is the latest borrower's: I00004 was on nobody's loan.
	if r := e.get(t, c, "/checkin/receipt"); !strings.Contains(r.Body, "<td>I00003</td>") || !strings.Contains(r.Body, "Alex Reader (P0001)") || strings.Contains(r.Body, "<td>I00004</td>") {
		t.Errorf("the receipt is not Alex Reader's returns:\n%s", r.Body)
	}
}

// TestPatronPageOpensVisit: the patron page's Check out button opens a visit.
func TestPatronPageOpensVisit(t *testing.T) {
	e := newDemoEnv(t)
	c := e.client(t)
	e.login(t, c, "desk", "desk")
	var id int64
	e.DB.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT id FROM patrons WHERE card = 'P0003'`).Scan(&id)
	})
	r := e.get(t, c, "/patrons/"+strconv.FormatInt(id, 10))
	if !strings.Contains(r.Body, `action="/checkout/patron" class="patron-checkout"><input type="hidden" name="card" value="P0003">`) {
		t.Fatalf("the patron page has no Check out button for P0003")
	}
	if r := e.post(t, c, "/checkout/patron", url.Values{"card": {"P0003"}}); r.Status != http.StatusSeeOther {
		t.Fatalf("Check out from the patron page: %d", r.Status)
	}
	if r := e.get(t, c, "/checkout"); !strings.Contains(r.Body, "Casey Waiting") {
		t.Error("the visit is not for the patron whose page it was")
	}
}

// TestDeskScriptSignedOut: a scan sent after the session ended gets a short 401,
// not the login page (which the script would swap into the list).
func TestDeskScriptSignedOut(t *testing.T) {
	e := newDemoEnv(t)
	c := e.client(t)
	r := e.scan(t, c, "/checkout/scan", url.Values{"scan": {"I00001"}})
	if r.Status != http.StatusUnauthorized || strings.Contains(r.Body, "<form") || !strings.Contains(r.Body, "signed out") {
		t.Fatalf("a signed-out scan: %d\n%s", r.Status, r.Body)
	}
	if r := e.post(t, c, "/checkout/scan", url.Values{"scan": {"I00001"}}); r.Status != http.StatusSeeOther {
		t.Errorf("a signed-out form post: %d, want 303 to the login page", r.Status)
	}
}
