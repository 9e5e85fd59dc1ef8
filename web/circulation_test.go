package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/db"
)

// sqlCount reads the statement count from a response's Server-Timing header.
func sqlCount(t *testing.T, r response) int {
	t.Helper()
	m := serverTimingRE.FindStringSubmatch(r.Header.Get("Server-Timing"))
	if m == nil {
		t.Fatalf("no Server-Timing in %v", r.Header)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

func TestCheckoutPage(t *testing.T) {
	e := newDemoEnv(t)
	c := e.client(t)
	e.login(t, c, "desk", "desk")

	r := e.get(t, c, "/checkout")
	if r.Status != 200 || !strings.Contains(r.Body, `<label id="scan-label" for="scan">Card number</label>`) || !strings.Contains(r.Body, "autofocus") {
		t.Fatalf("checkout page: %d, no Card number field with focus", r.Status)
	}

	t.Run("ErrUnknownCard", func(t *testing.T) {
		r := e.post(t, c, "/checkout/patron", url.Values{"card": {"P9999"}})
		if r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Body, "No patron has card number") {
			t.Fatalf("unknown card: %d", r.Status)
		}
	})

	t.Run("FindByName", func(t *testing.T) {
		r := e.post(t, c, "/checkout/patron", url.Values{"card": {"Alex Reader"}})
		if r.Status != http.StatusSeeOther {
			t.Fatalf("a name matching one patron: %d, want 303 to the visit", r.Status)
		}
		if r := e.get(t, c, "/checkout"); !strings.Contains(r.Body, "Alex Reader") {
			t.Fatal("the visit is not for Alex Reader")
		}
		e.post(t, c, "/checkout/done", nil)
	})

	t.Run("OK", func(t *testing.T) {
		r := e.post(t, c, "/checkout/patron", url.Values{"card": {"P0001"}})
		if r.Status != http.StatusSeeOther {
			t.Fatalf("card P0001: %d", r.Status)
		}
		r = e.get(t, c, "/checkout")
		for _, want := range []string{"Alex Reader", "Card expires", "Fines", `<label id="scan-label" for="scan">Barcode</label>`, "Check out</button>"} {
			if !strings.Contains(r.Body, want) {
				t.Errorf("patron's checkout page lacks %q", want)
			}
		}
		// session, user, the preferences' version (several servers may share
		// the database), the patron with their standing, this visit's loans.
		if n := sqlCount(t, r); n > 5 {
			t.Errorf("GET /checkout with a patron ran %d SQL statements, want at most 5", n)
		}
		r = e.post(t, c, "/checkout", url.Values{"barcode": {"I00001"}})
		if r.Status != http.StatusSeeOther {
			t.Fatalf("checkout I00001: %d\n%s", r.Status, r.Body)
		}
		// session and user (2) + the preferences' version (1) + the checkout
		// itself: the patron with their standing, the item, the rule, the holds,
		// the loans of the rule's item type, the calendar, the loan and the item
		// (8).
		if n := sqlCount(t, r); n > 11 {
			t.Errorf("POST /checkout ran %d SQL statements, want at most 11", n)
		}
		r = e.get(t, c, "/checkout")
		if !strings.Contains(r.Body, "I00001") || !strings.Contains(r.Body, "Pride and Prejudice") || !strings.Contains(r.Body, "2026-12-21 20:00") {
			t.Fatal("this visit's list lacks I00001 with its title and due date 2026-12-21 20:00")
		}
		r = e.get(t, c, "/checkout/slip")
		if r.Status != 200 || !strings.Contains(r.Body, "Pride and Prejudice") || !strings.Contains(r.Body, "2026-12-21") {
			t.Fatalf("due-date slip: %d", r.Status)
		}
	})

	t.Run("RescanSameDayRefused", func(t *testing.T) {
		// The day it was lent, renewing would not move the due date: the rescan
		// is refused at once, headed by that reason, with no renewal to confirm.
		r := e.post(t, c, "/checkout", url.Values{"barcode": {"I00001"}})
		if r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Body, "The due date would not move: I00001 not renewed") || strings.Contains(r.Body, ">Renew <kbd") {
			t.Fatalf("rescan the day of the loan: %d, want a refusal and no renewal offer\n%s", r.Status, r.Body)
		}
		r = e.post(t, c, "/checkout", url.Values{"barcode": {"I00001"}, "confirm": {"renew"}})
		if r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Body, "The due date would not move: I00001 not renewed") {
			t.Fatalf("confirmed renewal the day of the loan: %d\n%s", r.Status, r.Body)
		}
	})

	t.Run("ErrUnknownBarcode", func(t *testing.T) {
		r := e.post(t, c, "/checkout", url.Values{"barcode": {"NOPE123"}})
		if r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Body, "No item or patron has barcode NOPE123") {
			t.Fatalf("unknown barcode: %d", r.Status)
		}
		if strings.Contains(r.Body, "Confirm checkout") {
			t.Error("a refusal offers Confirm checkout")
		}
	})

	t.Run("ErrCardExpired", func(t *testing.T) {
		e.post(t, c, "/checkout/done", nil)
		e.post(t, c, "/checkout/patron", url.Values{"card": {"P0004"}})
		r := e.post(t, c, "/checkout", url.Values{"barcode": {"I00002"}})
		if r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Body, "Card P0004 expired on") {
			t.Fatalf("expired card: %d", r.Status)
		}
	})

	t.Run("ErrPatronBlocked", func(t *testing.T) {
		e.post(t, c, "/checkout/done", nil)
		e.post(t, c, "/checkout/patron", url.Values{"card": {"P0005"}})
		if r := e.get(t, c, "/checkout"); !strings.Contains(r.Body, "Blocked by staff") {
			t.Error("the patron header does not show the block")
		}
		r := e.post(t, c, "/checkout", url.Values{"barcode": {"I00002"}})
		if r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Body, "Emery Barred is blocked by staff") {
			t.Fatalf("blocked patron: %d", r.Status)
		}
	})

	t.Run("FinesConfirmedOncePerVisit", func(t *testing.T) {
		e.post(t, c, "/checkout/done", nil)
		e.post(t, c, "/checkout/patron", url.Values{"card": {"P0002"}})
		r := e.post(t, c, "/checkout", url.Values{"barcode": {"I00006"}})
		if r.Status != http.StatusConflict || !strings.Contains(r.Body, "Blake Owing owes 12.50 in fines; the limit is 5.00.") ||
			!strings.Contains(r.Body, ">Confirm checkout <kbd") || !strings.Contains(r.Body, ">Cancel <kbd") {
			t.Fatalf("fines over the limit: %d, want a confirmation naming the fines", r.Status)
		}
		r = e.post(t, c, "/checkout", url.Values{"barcode": {"I00006"}, "confirm": {"fines"}})
		if r.Status != http.StatusSeeOther {
			t.Fatalf("confirmed: %d", r.Status)
		}
		for _, bc := range []string{"I00007", "I00008"} {
			if r := e.post(t, c, "/checkout", url.Values{"barcode": {bc}}); r.Status != http.StatusSeeOther {
				t.Fatalf("%s after confirming fines for the visit: %d, want no second question", bc, r.Status)
			}
		}
		// A new visit asks again.
		e.post(t, c, "/checkout/done", nil)
		e.post(t, c, "/checkout/patron", url.Values{"card": {"P0002"}})
		if r := e.post(t, c, "/checkout", url.Values{"barcode": {"I00009"}}); r.Status != http.StatusConflict {
			t.Fatalf("new visit: %d, want the fines question again", r.Status)
		}
		var audits int
		e.DB.Read(context.Background(), func(tx *db.Tx) error {
			return tx.QueryRow(`SELECT count(*) FROM audit_log WHERE action = 'checkout.override' AND actor = 'desk'`).Scan(&audits)
		})
		if audits == 0 {
			t.Error("the override is not in the audit log")
		}
	})
}

func TestCheckinPage(t *testing.T) {
	e := newDemoEnv(t)
	c := e.client(t)
	e.login(t, c, "desk", "desk")
	e.post(t, c, "/checkout/patron", url.Values{"card": {"P0001"}})
	e.post(t, c, "/checkout", url.Values{"barcode": {"I00003"}})

	r := e.get(t, c, "/checkin")
	if r.Status != 200 || !strings.Contains(r.Body, `<label id="scan-label" for="scan">Barcode</label>`) || !strings.Contains(r.Body, ">Check in</button>") {
		t.Fatalf("checkin page: %d", r.Status)
	}
	r = e.post(t, c, "/checkin", url.Values{"barcode": {"I00003"}})
	if r.Status != http.StatusSeeOther {
		t.Fatalf("checkin: %d\n%s", r.Status, r.Body)
	}
	// session and user (2) + the preferences' version (1) + the checkin: the
	// item with its loan, the loan's close, the hold check, the item, the
	// checkin row (5) + saving the session (this first checkin names the
	// session's list).
	if n := sqlCount(t, r); n > 9 {
		t.Errorf("POST /checkin ran %d SQL statements, want at most 9", n)
	}
	r = e.get(t, c, "/checkin")
	if !strings.Contains(r.Body, "Returned from Alex Reader") || !strings.Contains(r.Body, "Nineteen Eighty-Four") {
		t.Fatal("the checkin list does not show I00003 returned")
	}
	// session, user, the preferences' version, this session's checkins.
	if n := sqlCount(t, r); n > 4 {
		t.Errorf("GET /checkin ran %d SQL statements, want at most 4", n)
	}

	t.Run("NotCheckedOut", func(t *testing.T) {
		if r := e.post(t, c, "/checkin", url.Values{"barcode": {"I00004"}}); r.Status != http.StatusSeeOther {
			t.Fatalf("checkin of an item not out: %d", r.Status)
		}
		if r := e.get(t, c, "/checkin"); !strings.Contains(r.Body, "it was not checked out") {
			t.Error("no word that the item was not checked out")
		}
	})

	t.Run("ErrUnknownBarcode", func(t *testing.T) {
		r := e.post(t, c, "/checkin", url.Values{"barcode": {"XYZ"}})
		if r.Status != http.StatusNotFound || !strings.Contains(r.Body, "No item has barcode XYZ") || !strings.Contains(r.Body, "Returned from Alex Reader") {
			t.Fatalf("unknown barcode: %d; the message and the list must both show", r.Status)
		}
	})

	t.Run("ErrEmptyBarcode", func(t *testing.T) {
		if r := e.post(t, c, "/checkin", url.Values{"barcode": {"  "}}); r.Status != http.StatusUnprocessableEntity {
			t.Fatalf("empty barcode: %d", r.Status)
		}
	})

	t.Run("Receipt", func(t *testing.T) {
		r := e.get(t, c, "/checkin/receipt")
		if r.Status != 200 || !strings.Contains(r.Body, "Nineteen Eighty-Four") {
			t.Fatalf("receipt: %d", r.Status)
		}
	})

	t.Run("Clear", func(t *testing.T) {
		e.post(t, c, "/checkin/clear", nil)
		if r := e.get(t, c, "/checkin"); strings.Contains(r.Body, "Returned from") {
			t.Error("the list survived Clear list")
		}
	})
}

func TestPatronPageRenewals(t *testing.T) {
	e := newDemoEnv(t)
	c := e.client(t)
	e.login(t, c, "desk", "desk")
	e.post(t, c, "/checkout/patron", url.Values{"card": {"P0001"}})
	for _, bc := range []string{"I00001", "I00002"} {
		if r := e.post(t, c, "/checkout", url.Values{"barcode": {bc}}); r.Status != http.StatusSeeOther {
			t.Fatalf("checkout %s: %d", bc, r.Status)
		}
	}
	var patronID, loanID int64
	e.DB.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT p.id, l.id FROM patrons p JOIN loans l ON l.patron_id = p.id AND l.returned_at IS NULL
			JOIN items i ON i.id = l.item_id WHERE p.card = 'P0001' AND i.barcode = 'I00001'`).Scan(&patronID, &loanID)
	})
	page := "/patrons/" + strconv.FormatInt(patronID, 10)
	r := e.get(t, c, page)
	if !strings.Contains(r.Body, "Loans (2)") || !strings.Contains(r.Body, "Pride and Prejudice") || !strings.Contains(r.Body, "Renew selected") {
		t.Fatal("the patron page does not list the two loans with renewal buttons")
	}

	e.Clock.Advance(7 * 24 * time.Hour) // a week later: the new due date is later
	e.login(t, c, "desk", "desk")
	r = e.post(t, c, page+"/renew", url.Values{"one": {strconv.FormatInt(loanID, 10)}})
	if r.Status != http.StatusSeeOther {
		t.Fatalf("renew one: %d", r.Status)
	}
	r = e.get(t, c, page)
	if !strings.Contains(r.Body, "Pride and Prejudice renewed; now due 2026-12-28") {
		t.Fatalf("no renewal message with the new due date:\n%s", r.Body)
	}
	// Renew all, twice more, a week apart: the first is allowed, the second
	// passes the limit of 2 for I00001.
	e.Clock.Advance(7 * 24 * time.Hour)
	e.login(t, c, "desk", "desk")
	e.post(t, c, page+"/renew", url.Values{"all": {"1"}})
	e.get(t, c, page)
	e.Clock.Advance(7 * 24 * time.Hour)
	e.login(t, c, "desk", "desk")
	e.post(t, c, page+"/renew", url.Values{"all": {"1"}})
	r = e.get(t, c, page)
	if !strings.Contains(r.Body, "Pride and Prejudice cannot be renewed: it has been renewed 2 of 2 times allowed.") {
		t.Fatalf("renewal past the limit not refused with a message:\n%s", r.Body)
	}
	if !strings.Contains(r.Body, "Staff may renew it anyway at Check out") {
		t.Error("the refusal does not say where staff may override it")
	}
	if r := e.post(t, c, page+"/renew", url.Values{"loan": {"abc"}}); r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("garbage loan id: %d, want 422", r.Status)
	}
}
