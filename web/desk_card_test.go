package web_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDeskCardAlerts: a card's state is said when the card is scanned, before any
// item: an expired card, a blocked patron and fines over the limit each get a
// banner with the next step and the question sound; a card in good standing gets
// neither. Without the desk script the page shows the same banners.
func TestDeskCardAlerts(t *testing.T) {
	e := newDemoEnv(t)
	c := e.client(t)
	e.login(t, c, "desk", "desk")

	for _, tc := range []struct {
		card  string
		wants []string
	}{
		{"P0004", []string{`id="card-alert-card_expired">Card expired</h2>`, "Card P0004 expired on", `action="/checkout/renew-card"`, ">Renew card</button>"}},
		{"P0005", []string{`id="card-alert-blocked">Patron blocked</h2>`, "Blocked by staff:", "to remove the block"}},
		{"P0002", []string{`id="card-alert-fines">Fines over the limit</h2>`, "12.50 owed in fines; the limit is 5.00.", "Take a payment on the patron's page</a>"}},
	} {
		t.Run(tc.card, func(t *testing.T) {
			r := e.scan(t, c, "/checkout/scan", url.Values{"scan": {tc.card}})
			row(t, r, http.StatusOK, "info", tc.card)
			first, _, _ := strings.Cut(r.Body, "</tr>")
			if !strings.Contains(first, `data-sound="question"`) {
				t.Errorf("the card's row plays no question sound:\n%s", first)
			}
			mustContain(t, tc.card+"'s scan", r.Body, tc.wants...)
			if e.loans(t, tc.card) != 0 {
				t.Error("a card scan lent something")
			}

			// Without the desk script: the card form, then the page.
			e.post(t, c, "/checkout/done", nil)
			if r := e.post(t, c, "/checkout/patron", url.Values{"card": {tc.card}}); r.Status != http.StatusSeeOther {
				t.Fatalf("card form: %d", r.Status)
			}
			mustContain(t, tc.card+"'s visit without the desk script", e.get(t, c, "/checkout").Body, tc.wants...)
			e.post(t, c, "/checkout/done", nil)
		})
	}

	t.Run("GoodStanding", func(t *testing.T) {
		r := e.scan(t, c, "/checkout/scan", url.Values{"scan": {"P0001"}})
		row(t, r, http.StatusOK, "info", "P0001")
		if strings.Contains(r.Body, "data-sound=") || strings.Contains(r.Body, "card-alert") {
			t.Errorf("a card in good standing gets a banner or a sound:\n%s", r.Body)
		}
		e.post(t, c, "/checkout/done", nil)
	})

	// Renew card on the banner: the banner goes, and the first item is lent.
	t.Run("RenewCardFromBanner", func(t *testing.T) {
		e.scan(t, c, "/checkout/scan", url.Values{"scan": {"P0004"}})
		r := e.scan(t, c, "/checkout/renew-card", nil)
		row(t, r, http.StatusOK, "info", "P0004")
		if strings.Contains(r.Body, "card-alert") {
			t.Errorf("the expired card's banner stays after renewing the card:\n%s", r.Body)
		}
		if got := queryString(t, e, `SELECT expires_on FROM patrons WHERE card = 'P0004'`); got < "2026-11-30" {
			t.Fatalf("card expires %s after renewing", got)
		}
		r = e.scan(t, c, "/checkout/scan", url.Values{"scan": {"I00002"}})
		row(t, r, http.StatusOK, "done", "I00002")
	})
}

// TestDeskRenewRefusals: a refused renewal at Check out is headed by its reason; a
// renewal that would not move the due date (a loan made today) is refused and not
// counted; "another patron is waiting" may be overridden with a reason, which is
// audited.
func TestDeskRenewRefusals(t *testing.T) {
	e := newDemoEnv(t)
	c := e.client(t)
	e.login(t, c, "desk", "desk")
	e.scan(t, c, "/checkout/scan", url.Values{"scan": {"P0001"}})
	row(t, e.scan(t, c, "/checkout/scan", url.Values{"scan": {"I00001"}}), http.StatusOK, "done", "I00001")
	loanID := int64(e.count(t, `SELECT l.id FROM loans l JOIN items i ON i.id = l.item_id WHERE i.barcode = 'I00001' AND l.returned_at IS NULL`))
	loan := url.Values{"loan": {strconv.FormatInt(loanID, 10)}}
	loanRow := func() string {
		return queryString(t, e, `SELECT due_at || ' ' || renewals FROM loans WHERE id = ?`, loanID)
	}
	issued := loanRow()

	t.Run("ErrSameDay", func(t *testing.T) {
		e.Clock.Advance(time.Minute)
		r := e.scan(t, c, "/checkout/renew", loan)
		row(t, r, http.StatusUnprocessableEntity, "refused", "I00001")
		mustContain(t, "a renewal the day of the loan", r.Body, "<h2>The due date would not move: I00001 not renewed</h2>", "No renewal was used.")
		if strings.Contains(r.Body, "Renew anyway") {
			t.Error("a renewal that would not move the due date offers an override")
		}
		if got := loanRow(); got != issued {
			t.Errorf("loan %q after a refused renewal, want %q", got, issued)
		}
		// Rescanning the item and confirming the renewal: the same refusal.
		r = e.scan(t, c, "/checkout", url.Values{"barcode": {"I00001"}, "confirm": {"renew"}})
		row(t, r, http.StatusUnprocessableEntity, "refused", "I00001")
		mustContain(t, "a rescan's renewal the day of the loan", r.Body, "<h2>The due date would not move: I00001 not renewed</h2>")
		if got := loanRow(); got != issued {
			t.Errorf("loan %q after a refused renewal, want %q", got, issued)
		}
	})

	t.Run("OverrideHold", func(t *testing.T) {
		placeHold(t, e, "P0003", "I00001")
		e.Clock.Advance(7 * 24 * time.Hour)
		e.login(t, c, "desk", "desk")
		e.scan(t, c, "/checkout/scan", url.Values{"scan": {"P0001"}})
		r := e.scan(t, c, "/checkout/renew", loan)
		row(t, r, http.StatusUnprocessableEntity, "refused", "I00001")
		mustContain(t, "a renewal with another patron waiting", r.Body, "<h2>Another patron is waiting: I00001 not renewed</h2>",
			"another patron is waiting for it", `class="renew-override"`, `name="override"`, "Renew anyway</button>")

		// No reason, no override.
		r = e.scan(t, c, "/checkout/renew", url.Values{"loan": loan["loan"], "override": {"  "}})
		row(t, r, http.StatusUnprocessableEntity, "refused", "Renew")
		mustContain(t, "an override without a reason", r.Body, "say why it is renewed anyway")
		if got := loanRow(); got != issued {
			t.Errorf("loan %q after an override without a reason, want %q", got, issued)
		}

		r = e.scan(t, c, "/checkout/renew", url.Values{"loan": loan["loan"], "override": {"Needed for an exam on Friday"}})
		row(t, r, http.StatusOK, "done", "I00001")
		if got := loanRow(); got != "2026-12-28T20:00:00Z 1" {
			t.Errorf("loan %q after the override, want renewed once to 28 December", got)
		}
		detail := queryString(t, e, `SELECT a.detail || ' by ' || s.username FROM audit_log a JOIN staff_users s ON s.id = a.staff_id
			WHERE a.action = 'renew.override' AND a.object_type = 'loan' AND a.object_id = ?`, loanID)
		mustContain(t, "the override's audit", detail, "on_hold: another patron is waiting for it. Reason: Needed for an exam on Friday", "by desk")
	})

	// Without the desk script: the page with the refusal's banner and the
	// override form, then post, redirect, get.
	t.Run("OverrideWithoutScript", func(t *testing.T) {
		e.Clock.Advance(7 * 24 * time.Hour)
		e.login(t, c, "desk", "desk")
		e.post(t, c, "/checkout/patron", url.Values{"card": {"P0001"}})
		r := e.post(t, c, "/checkout/renew", loan)
		if r.Status != http.StatusUnprocessableEntity {
			t.Fatalf("refused renewal: %d", r.Status)
		}
		mustContain(t, "the refused renewal's page", r.Body, "<h2>Another patron is waiting: I00001 not renewed</h2>", "Renew anyway</button>")
		r = e.post(t, c, "/checkout/renew", url.Values{"loan": loan["loan"], "override": {"Housebound reader"}})
		if r.Status != http.StatusSeeOther {
			t.Fatalf("override: %d", r.Status)
		}
		mustContain(t, "the page after the override", e.get(t, c, "/checkout").Body, "renewed by staff override (Housebound reader)")
		if n := e.count(t, `SELECT count(*) FROM audit_log WHERE action = 'renew.override' AND object_id = ?`, loanID); n != 2 {
			t.Errorf("%d overrides audited, want 2", n)
		}
		if got := e.count(t, `SELECT renewals FROM loans WHERE id = ?`, loanID); got != 2 {
			t.Errorf("renewals %d, want 2", got)
		}
	})

	// Both renewals a Book allows used: the refusal is headed by that reason
	// (the first of the two refusals), with the override offered.
	t.Run("NoRenewalsLeft", func(t *testing.T) {
		e.Clock.Advance(7 * 24 * time.Hour)
		e.login(t, c, "desk", "desk")
		e.scan(t, c, "/checkout/scan", url.Values{"scan": {"P0001"}})
		before := loanRow()
		r := e.scan(t, c, "/checkout/renew", loan)
		row(t, r, http.StatusUnprocessableEntity, "refused", "I00001")
		mustContain(t, "a renewal with none left", r.Body, "<h2>No renewals left: I00001 not renewed</h2>",
			"it has been renewed 2 of 2 times allowed", "Renew anyway</button>")
		if got := loanRow(); got != before {
			t.Errorf("loan %q after a refused renewal, want %q", got, before)
		}
	})
}

// TestDeskCardLost: "Card reported lost" on the patron's form is stored and
// audited; scanning the card at Check out then shows its banner with the next
// step and the question sound, until staff untick it.
func TestDeskCardLost(t *testing.T) {
	e := newDemoEnv(t)
	c := e.client(t)
	e.login(t, c, "desk", "desk")
	path := e.patronPath(t, "P0003")
	form := url.Values{"card": {"P0003"}, "surname": {"Waiting"}, "first_name": {"Casey"}, "email": {""}, "phone": {""},
		"address": {""}, "category": {"ADULT"}, "home_branch": {"CEN"}, "notes": {""}, "desk_message": {""}, "card_lost": {"1"}}
	if r := e.get(t, c, path+"/edit"); !strings.Contains(r.Body, `<label for="card_lost">Card reported lost</label>`) {
		t.Fatal("the patron form has no Card reported lost box")
	}
	if r := e.post(t, c, path, form); r.Status != http.StatusSeeOther {
		t.Fatalf("save: %d %s", r.Status, r.Body)
	}
	if n := e.count(t, `SELECT card_lost FROM patrons WHERE card = 'P0003'`); n != 1 {
		t.Fatal("card_lost was not stored")
	}
	mustContain(t, "the audit of the change", queryString(t, e, `SELECT detail FROM audit_log WHERE action = 'patron.update' ORDER BY id DESC LIMIT 1`),
		`card reported lost "no" -> "yes"`)
	if r := e.get(t, c, path+"/edit"); !strings.Contains(r.Body, `id="card_lost" name="card_lost" value="1" checked`) {
		t.Error("the form does not show the box ticked")
	}

	r := e.scan(t, c, "/checkout/scan", url.Values{"scan": {"P0003"}})
	row(t, r, http.StatusOK, "info", "P0003")
	first, _, _ := strings.Cut(r.Body, "</tr>")
	if !strings.Contains(first, `data-sound="question"`) {
		t.Errorf("the lost card's row plays no question sound:\n%s", first)
	}
	mustContain(t, "the lost card's scan", r.Body, `id="card-alert-card_lost">Card reported lost</h2>`,
		"Card P0003 was reported lost", `href="`+path+`/edit"`)
	e.post(t, c, "/checkout/done", nil)

	form.Del("card_lost")
	e.post(t, c, path, form)
	r = e.scan(t, c, "/checkout/scan", url.Values{"scan": {"P0003"}})
	row(t, r, http.StatusOK, "info", "P0003")
	if strings.Contains(r.Body, "card-alert") {
		t.Error("the banner stays after unticking Card reported lost")
	}
}

// TestDeskItemBeforeCard: an item's barcode scanned before any card is refused
// as an item's, even when the patron search would match it (here the digits of
// a patron's phone number): it never opens that patron's visit.
func TestDeskItemBeforeCard(t *testing.T) {
	e := newDemoEnv(t)
	c := e.client(t)
	e.login(t, c, "desk", "desk")
	e.exec(t, `UPDATE items SET barcode = '55501234' WHERE barcode = 'I00001'`)
	e.exec(t, `UPDATE patrons SET phone = '(555) 0123-4' WHERE card = 'P0001'`)
	if r := e.get(t, c, "/patrons?q=55501234"); !strings.Contains(r.Body, "P0001") {
		t.Fatalf("the patron search does not find P0001 by the digits of the phone; the test proves nothing:\n%s", r.Body)
	}

	r := e.scan(t, c, "/checkout/scan", url.Values{"scan": {"55501234"}})
	row(t, r, http.StatusUnprocessableEntity, "refused", "55501234")
	mustContain(t, "an item's barcode before a card", r.Body, "is an item&#39;s barcode")
	if strings.Contains(r.Body, "Now serving") {
		t.Errorf("an item's barcode opened a patron's visit:\n%s", r.Body)
	}
}
