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

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/holds"
)

// queryString runs a one-value query and returns the value as text.
func queryString(t *testing.T, e *testEnv, query string, args ...any) string {
	t.Helper()
	var s string
	err := e.DB.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(query, args...).Scan(&s)
	})
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return s
}

// placeHold places a record-level hold for the patron with card on the title of the
// copy barcode, picked up at Central, and returns its id.
func placeHold(t *testing.T, e *testEnv, card, barcode string, confirm ...string) int64 {
	t.Helper()
	return placeHoldAt(t, e, card, barcode, "CEN", confirm...)
}

// placeHoldAt places a hold for card on the title of barcode, for pickup at the
// branch with the code pickup.
func placeHoldAt(t *testing.T, e *testEnv, card, barcode, pickup string, confirm ...string) int64 {
	t.Helper()
	var placed holds.Placed
	err := e.DB.Write(context.Background(), func(tx *db.Tx) error {
		var recordID int64
		if err := tx.QueryRow(`SELECT record_id FROM items WHERE barcode = ?`, barcode).Scan(&recordID); err != nil {
			return err
		}
		var err error
		placed, err = holds.Place(tx, holds.PlaceRequest{Actor: stacks.System, RecordID: recordID, PatronCard: card,
			PickupBranchCode: pickup, Confirm: confirm}, time.UTC)
		return err
	})
	if err != nil {
		t.Fatalf("place hold for %s on %s: %v", card, barcode, err)
	}
	return placed.HoldID
}

// holdPath is the path of a hold's actions.
func holdPath(id int64) string { return "/holds/" + strconv.FormatInt(id, 10) }

// section returns the part of a page from the heading with the given id to the end
// of its section.
func section(body, headingID string) string {
	i := strings.Index(body, `id="`+headingID+`"`)
	if i < 0 {
		return ""
	}
	rest := body[i:]
	if j := strings.Index(rest, "</section>"); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// waitingHold is the demo's waiting hold: its id, pickup branch code, patron name
// and copy barcode. Holds at Central come first.
type waitingHold struct {
	ID                    int64
	Branch, Name, Barcode string
	ItemID                int64
}

func findWaitingHold(t *testing.T, e *testEnv) waitingHold {
	t.Helper()
	var w waitingHold
	err := e.DB.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT h.id, b.code, p.first_name || ' ' || p.surname, i.barcode, i.id
			FROM holds h JOIN branches b ON b.id = h.pickup_branch_id JOIN patrons p ON p.id = h.patron_id
			JOIN items i ON i.id = h.trapped_item_id
			WHERE h.status = 'waiting' ORDER BY b.code = 'CEN' DESC, h.id LIMIT 1`).Scan(&w.ID, &w.Branch, &w.Name, &w.Barcode, &w.ItemID)
	})
	if err != nil {
		t.Fatalf("the demo has no waiting hold: %v", err)
	}
	return w
}

func TestHoldsPage(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)
	w := findWaitingHold(t, e)
	placeHold(t, e, "P0003", "I00003") // I00003 is on the shelf at Central: pull it

	t.Run("DefaultBranch", func(t *testing.T) {
		r := e.get(t, c, "/holds")
		if r.Status != http.StatusOK {
			t.Fatalf("GET /holds: %d", r.Status)
		}
		mustContain(t, "the Holds page", r.Body, "<h1>Holds</h1>", `aria-current="page">Holds`, `<label for="branch">Branch</label>`,
			`<option value="CEN" selected>Central</option>`, `id="shelf-title">Hold shelf`, `id="expired-title">Expired holds (0)`,
			`id="pull-title">Pull list`, "Pull these copies and check them in to set them aside.")
		pull := section(r.Body, "pull-title")
		mustContain(t, "the pull list", pull, "Nineteen Eighty-Four", "Orwell, George", "FIC ORW", "I00003", "Casey Waiting", "Central")
	})

	t.Run("PullNotOnShelf", func(t *testing.T) {
		r := e.post(t, c, "/holds/pull/not-on-shelf", url.Values{"barcode": {"I00003"}, "return": {"/holds?branch=CEN"}})
		if r.Status != http.StatusSeeOther || r.Location != "/holds?branch=CEN" {
			t.Fatalf("not on shelf: %d to %q", r.Status, r.Location)
		}
		if st := queryString(t, e, `SELECT status FROM items WHERE barcode = 'I00003'`); st != "missing" {
			t.Fatalf("I00003 is %s, want missing", st)
		}
		r = e.get(t, c, r.Location)
		mustContain(t, "the Holds page", r.Body, "I00003 is marked missing; its hold is asked of the next copy")
		if strings.Contains(section(r.Body, "pull-title"), "I00003") {
			t.Error("the copy not on the shelf is still on the pull list")
		}
		// Again: it is no longer on the shelf, so it cannot be marked missing.
		e.post(t, c, "/holds/pull/not-on-shelf", url.Values{"barcode": {"I00003"}, "return": {"/holds?branch=CEN"}})
		mustContain(t, "the Holds page", e.get(t, c, "/holds?branch=CEN").Body, "only an available item can be marked missing")
	})

	t.Run("HoldShelf", func(t *testing.T) {
		r := e.get(t, c, "/holds?branch="+w.Branch)
		if r.Status != http.StatusOK {
			t.Fatalf("GET /holds?branch=%s: %d", w.Branch, r.Status)
		}
		shelf := section(r.Body, "shelf-title")
		mustContain(t, "the hold shelf", shelf, w.Name, w.Barcode, "Pick up by", "Waiting since", `href="`+holdPath(w.ID)+`/slip"`)
		if strings.Contains(shelf, "expired") {
			t.Error("a hold still to be collected is marked expired")
		}
	})

	t.Run("ErrUnknownBranch", func(t *testing.T) {
		if r := e.get(t, c, "/holds?branch=NOPE"); r.Status != http.StatusNotFound || !strings.Contains(r.Body, "no branch with code") {
			t.Fatalf("unknown branch: %d", r.Status)
		}
	})

	t.Run("FewStatements", func(t *testing.T) {
		e.get(t, c, "/holds")
		r := e.get(t, c, "/holds")
		if n := sqlCount(t, r); n > 8 {
			t.Errorf("GET /holds ran %d statements, want at most 8", n)
		}
	})

	t.Run("Slip", func(t *testing.T) {
		r := e.get(t, c, holdPath(w.ID)+"/slip")
		if r.Status != http.StatusOK {
			t.Fatalf("slip: %d", r.Status)
		}
		mustContain(t, "the hold slip", r.Body, "Hold for", w.Name, w.Barcode, "Pick up by", "Pickup branch",
			`class="print-button" hidden`, `<script src="/static/stacks.js`)
		if hasInlineScript(r.Body) {
			t.Error("the slip has inline script")
		}
	})

	t.Run("ErrSlipOfQueuedHold", func(t *testing.T) {
		id := placeHold(t, e, "P0001", "I00004")
		if r := e.get(t, c, holdPath(id)+"/slip"); r.Status != http.StatusConflict {
			t.Fatalf("slip of a queued hold: %d, want 409", r.Status)
		}
		if r := e.get(t, c, "/holds/abc/slip"); r.Status != http.StatusNotFound {
			t.Fatalf("slip of a malformed id: %d, want 404", r.Status)
		}
	})
}

func TestHoldExpire(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)
	w := findWaitingHold(t, e)
	back := "/holds?branch=" + w.Branch

	// Too early: refused with a message, nothing changes.
	r := e.post(t, c, holdPath(w.ID)+"/expire", url.Values{"return": {back}})
	if r.Status != http.StatusSeeOther || r.Location != back {
		t.Fatalf("early clear: %d to %q", r.Status, r.Location)
	}
	if r := e.get(t, c, back); !strings.Contains(r.Body, "has not expired") {
		t.Error("no message refusing to clear a hold that can still be collected")
	}

	e.Clock.Advance(30 * 24 * time.Hour)
	e.login(t, c, "desk", "desk") // the idle timeout signed desk out
	r = e.get(t, c, back)
	expired := section(r.Body, "expired-title")
	mustContain(t, "the expired holds", expired, w.Name, w.Barcode, ">Clear</button>", `action="`+holdPath(w.ID)+`/expire"`)
	mustContain(t, "the hold shelf", section(r.Body, "shelf-title"), `<strong class="bad">expired</strong>`)

	r = e.post(t, c, holdPath(w.ID)+"/expire", url.Values{"return": {back}})
	if r.Status != http.StatusSeeOther || r.Location != back {
		t.Fatalf("clear: %d to %q", r.Status, r.Location)
	}
	if st := queryString(t, e, `SELECT status FROM holds WHERE id = ?`, w.ID); st != "expired" {
		t.Fatalf("hold status after Clear: %q, want expired", st)
	}
	item := queryString(t, e, `SELECT status FROM items WHERE id = ?`, w.ItemID)
	next := queryString(t, e, `SELECT count(*) FROM holds WHERE trapped_item_id = ? AND status IN ('waiting', 'in_transit')`, w.ItemID)
	switch {
	case next == "1" && (item == "on_hold_shelf" || item == "in_transit"):
	case next == "0" && (item == "available" || item == "in_transit"):
	default:
		t.Fatalf("the copy after Clear: status %q with %s holds trapping it", item, next)
	}
	r = e.get(t, c, back)
	if !regexp.MustCompile(`Cleared the hold for ` + regexp.QuoteMeta(w.Name) + ` on [^;]*; (put ` + w.Barcode + ` back on the shelf|` +
		w.Barcode + ` now fills the hold for|send ` + w.Barcode + ` to )`).MatchString(r.Body) {
		t.Errorf("no message saying where the copy goes:\n%s", r.Body)
	}
	if strings.Contains(section(r.Body, "shelf-title"), w.Barcode+" ") && next == "0" {
		t.Error("the cleared hold is still on the hold shelf")
	}
}

// TestCheckinExpiredHold: scanning at Check in a copy whose hold was not collected
// in time ends the hold, and the desk's row says so and where the copy goes now.
func TestCheckinExpiredHold(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)
	w := findWaitingHold(t, e)
	if w.Branch != "CEN" {
		t.Skipf("the demo's first waiting hold is at %s, not at the desk's branch", w.Branch)
	}
	e.Clock.Advance(30 * 24 * time.Hour)
	e.login(t, c, "desk", "desk") // the idle timeout signed desk out
	r := e.post(t, c, "/checkin", url.Values{"barcode": {w.Barcode}})
	if r.Status != http.StatusSeeOther {
		t.Fatalf("checkin: %d\n%s", r.Status, r.Body)
	}
	if st := queryString(t, e, `SELECT status || ' ' || cancel_reason FROM holds WHERE id = ?`, w.ID); st != "expired not collected in time" {
		t.Fatalf("hold after the checkin: %q, want expired", st)
	}
	item := queryString(t, e, `SELECT status FROM items WHERE id = ?`, w.ItemID)
	next := queryString(t, e, `SELECT coalesce(max(p.first_name || ' ' || p.surname), '') FROM holds h JOIN patrons p ON p.id = h.patron_id
		WHERE h.trapped_item_id = ? AND h.status IN ('waiting', 'in_transit')`, w.ItemID)
	r = e.get(t, c, r.Location)
	row := regexp.MustCompile(`Hold for ` + regexp.QuoteMeta(w.Name) + ` expired on \d{4}-\d\d-\d\d[^<]*: ended\. ([^<]*)</li>`).FindStringSubmatch(r.Body)
	if row == nil {
		t.Fatalf("the row does not say the hold expired:\n%s", r.Body)
	}
	switch {
	case next != "" && row[1] == "The copy fills the next hold." && strings.Contains(r.Body, "Hold found</strong> for "+next):
	case next == "" && item == "available" && row[1] == "No other hold wants it: back to the shelf.":
	case next == "" && item == "in_transit" && strings.HasPrefix(row[1], "No other hold wants it: send it to "):
	default:
		t.Errorf("row says %q; the copy is %s, next hold %q", row[1], item, next)
	}
}

func TestHoldActions(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)
	h1 := placeHold(t, e, "P0001", "I00005")
	h2 := placeHold(t, e, "P0002", "I00005")
	h3 := placeHold(t, e, "P0003", "I00005")
	record := "/records/" + queryString(t, e, `SELECT record_id FROM items WHERE barcode = 'I00005'`)
	priority := func(id int64) string {
		return queryString(t, e, `SELECT priority FROM holds WHERE id = ?`, id)
	}

	t.Run("Move", func(t *testing.T) {
		r := e.post(t, c, holdPath(h3)+"/move", url.Values{"to": {"1"}, "return": {record}})
		if r.Status != http.StatusSeeOther || r.Location != record {
			t.Fatalf("move: %d to %q, want 303 to %s", r.Status, r.Location, record)
		}
		if p1, p2, p3 := priority(h1), priority(h2), priority(h3); p1 != "2" || p2 != "3" || p3 != "1" {
			t.Fatalf("positions after moving the third to the top: %s %s %s, want 2 3 1", p1, p2, p3)
		}
		r = e.get(t, c, record)
		mustContain(t, "the record page", r.Body, "The hold for Casey Waiting on The Hobbit is now number 1 in the queue.")
		// Back to the bottom; a position past the end means the end.
		e.post(t, c, holdPath(h3)+"/move", url.Values{"to": {"99"}, "return": {record}})
		if p1, p2, p3 := priority(h1), priority(h2), priority(h3); p1 != "1" || p2 != "2" || p3 != "3" {
			t.Fatalf("positions after moving it to the bottom: %s %s %s, want 1 2 3", p1, p2, p3)
		}
	})

	t.Run("ErrMoveNotANumber", func(t *testing.T) {
		r := e.post(t, c, holdPath(h3)+"/move", url.Values{"to": {"top"}, "return": {record}})
		if r.Status != http.StatusSeeOther || r.Location != record {
			t.Fatalf("move to garbage: %d to %q", r.Status, r.Location)
		}
		r = e.get(t, c, record)
		mustContain(t, "the record page", r.Body, `class="flash error"`, "as a number")
	})

	page := e.patronPath(t, "P0001")

	t.Run("SuspendResume", func(t *testing.T) {
		r := e.post(t, c, holdPath(h1)+"/suspend", url.Values{"until": {"2026-12-20"}, "return": {page}})
		if r.Status != http.StatusSeeOther || r.Location != page {
			t.Fatalf("suspend: %d to %q", r.Status, r.Location)
		}
		if s := queryString(t, e, `SELECT coalesce(suspended_until, '') FROM holds WHERE id = ?`, h1); s != "2026-12-20" {
			t.Fatalf("suspended until %q", s)
		}
		r = e.get(t, c, page)
		mustContain(t, "the patron page", r.Body, "suspended until 2026-12-20", "Suspended until 2026-12-20", ">Resume</button>")

		r = e.post(t, c, holdPath(h1)+"/resume", url.Values{"return": {page}})
		if r.Status != http.StatusSeeOther || r.Location != page {
			t.Fatalf("resume: %d to %q", r.Status, r.Location)
		}
		if s := queryString(t, e, `SELECT coalesce(suspended_until, '') FROM holds WHERE id = ?`, h1); s != "" {
			t.Fatalf("still suspended until %q after Resume", s)
		}
		mustContain(t, "the patron page", e.get(t, c, page).Body, "is active again")
	})

	t.Run("ErrSuspendPast", func(t *testing.T) {
		e.post(t, c, holdPath(h1)+"/suspend", url.Values{"until": {"2026-11-30"}, "return": {page}})
		mustContain(t, "the patron page", e.get(t, c, page).Body, `class="flash error"`, "must be after today")
		if s := queryString(t, e, `SELECT coalesce(suspended_until, '') FROM holds WHERE id = ?`, h1); s != "" {
			t.Fatalf("suspended until today: %q", s)
		}
	})

	t.Run("ErrCancelWithoutReason", func(t *testing.T) {
		r := e.post(t, c, holdPath(h1)+"/cancel", url.Values{"reason": {"  "}, "return": {page}})
		if r.Status != http.StatusSeeOther || r.Location != page {
			t.Fatalf("cancel without reason: %d to %q", r.Status, r.Location)
		}
		mustContain(t, "the patron page", e.get(t, c, page).Body, `class="flash error"`, "Say why the hold is cancelled")
		if st := queryString(t, e, `SELECT status FROM holds WHERE id = ?`, h1); st != "queued" {
			t.Fatalf("hold %s after a refused cancel", st)
		}
	})

	t.Run("Cancel", func(t *testing.T) {
		r := e.post(t, c, holdPath(h1)+"/cancel", url.Values{"reason": {"patron asked"}, "return": {page}})
		if r.Status != http.StatusSeeOther || r.Location != page {
			t.Fatalf("cancel: %d to %q", r.Status, r.Location)
		}
		if st := queryString(t, e, `SELECT status || ':' || cancel_reason FROM holds WHERE id = ?`, h1); st != "cancelled:patron asked" {
			t.Fatalf("hold after Cancel: %q", st)
		}
		if p2, p3 := priority(h2), priority(h3); p2 != "1" || p3 != "2" {
			t.Fatalf("queue after Cancel: %s %s, want 1 2", p2, p3)
		}
		mustContain(t, "the patron page", e.get(t, c, page).Body, "Cancelled the hold for Alex Reader on The Hobbit.")
		// Closed holds cannot change.
		e.post(t, c, holdPath(h1)+"/resume", url.Values{"return": {page}})
		mustContain(t, "the patron page", e.get(t, c, page).Body, `class="flash error"`)
	})

	t.Run("ErrOpenRedirect", func(t *testing.T) {
		for _, back := range []string{"//evil.example/", "https://evil.example/", "/\\evil.example", ""} {
			r := e.post(t, c, holdPath(h2)+"/move", url.Values{"to": {"1"}, "return": {back}})
			if r.Status != http.StatusSeeOther || r.Location != "/holds" {
				t.Errorf("return %q: %d to %q, want 303 to /holds", back, r.Status, r.Location)
			}
		}
		e.get(t, c, "/holds")
	})

	t.Run("ErrNoSuchHold", func(t *testing.T) {
		for _, path := range []string{"/holds/999999/resume", "/holds/abc/resume"} {
			r := e.post(t, c, path, url.Values{"return": {page}})
			if r.Status != http.StatusSeeOther || r.Location != page {
				t.Fatalf("POST %s: %d to %q", path, r.Status, r.Location)
			}
			mustContain(t, "the patron page", e.get(t, c, page).Body, `class="flash error"`, "no hold")
		}
	})
}

func TestPatronHolds(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)

	t.Run("Section", func(t *testing.T) {
		placeHold(t, e, "P0003", "I00010")
		page := e.patronPath(t, "P0003")
		r := e.get(t, c, page)
		if r.Status != http.StatusOK {
			t.Fatalf("patron page: %d", r.Status)
		}
		holdsSection := section(r.Body, "holds-title")
		mustContain(t, "the holds section", holdsSection, "Holds (1)", ">The Left Hand of Darkness</a>", "In queue", "Position 1", "Central",
			"2026-11-30", "Suspend until", ">Suspend</button>", `<label for="`, ">Reason</label>", ">Cancel hold</button>",
			`name="return" value="`+page+`"`, `<label for="hold_item">Barcode or ISBN</label>`, `<label for="hold_pickup">Pickup branch</label>`,
			`<option value="CEN" selected>Central</option>`, ">Place hold</button>")
	})

	page := e.patronPath(t, "P0001")
	place := func(form url.Values) response { return e.post(t, c, page+"/holds", form) }

	t.Run("PlaceByBarcode", func(t *testing.T) {
		r := place(url.Values{"item": {" I00010 "}, "pickup": {"CEN"}})
		if r.Status != http.StatusSeeOther || r.Location != page {
			t.Fatalf("place hold: %d to %q\n%s", r.Status, r.Location, r.Body)
		}
		r = e.get(t, c, page)
		mustContain(t, "the patron page", r.Body, "Hold placed for Alex Reader: The Left Hand of Darkness, position 2", "Holds (1)")
	})

	t.Run("ConfirmSecond", func(t *testing.T) {
		r := place(url.Values{"item": {"I00010"}, "pickup": {"EAS"}})
		if r.Status != http.StatusConflict {
			t.Fatalf("second hold on the title: %d, want 409", r.Status)
		}
		mustContain(t, "the warning", r.Body, "already has a hold", ">Place hold anyway</button>", `name="confirm" value="already_holds"`,
			`value="I00010"`, `<option value="EAS" selected>Eastside</option>`)
		r = place(url.Values{"item": {"I00010"}, "pickup": {"EAS"}, "confirm": {"already_holds"}})
		if r.Status != http.StatusSeeOther {
			t.Fatalf("place hold anyway: %d", r.Status)
		}
		if n := queryString(t, e, `SELECT count(*) FROM holds h JOIN patrons p ON p.id = h.patron_id
			WHERE p.card = 'P0001' AND h.status = 'queued'`); n != "2" {
			t.Fatalf("P0001 has %s queued holds, want 2", n)
		}
	})

	t.Run("PlaceByISBN", func(t *testing.T) {
		e.DB.Write(context.Background(), func(tx *db.Tx) error {
			_, err := tx.Exec(`UPDATE records SET isbn = '9780807083697' WHERE id = (SELECT record_id FROM items WHERE barcode = 'I00002')`)
			return err
		})
		r := place(url.Values{"item": {"978-0-8070-8369-7"}, "pickup": {"CEN"}})
		if r.Status != http.StatusSeeOther {
			t.Fatalf("place hold by ISBN: %d\n%s", r.Status, r.Body)
		}
		mustContain(t, "the patron page", e.get(t, c, page).Body, "Hold placed for Alex Reader: Kindred")
	})

	t.Run("ErrUnknown", func(t *testing.T) {
		for _, in := range []string{"NOPE42", "9999999999999"} {
			r := place(url.Values{"item": {in}, "pickup": {"CEN"}})
			if r.Status != http.StatusNotFound || !strings.Contains(fieldError(r.Body, "hold_item"), "No item has barcode") {
				t.Errorf("hold on %q: %d, message %q", in, r.Status, fieldError(r.Body, "hold_item"))
			}
		}
		r := place(url.Values{"item": {""}, "pickup": {"CEN"}})
		if r.Status != http.StatusUnprocessableEntity || fieldError(r.Body, "hold_item") == "" {
			t.Errorf("hold on nothing: %d", r.Status)
		}
	})

	t.Run("ErrPickup", func(t *testing.T) {
		r := place(url.Values{"item": {"I00001"}, "pickup": {"XXX"}})
		if r.Status != http.StatusUnprocessableEntity || !strings.Contains(fieldError(r.Body, "hold_pickup"), "pickup branch") {
			t.Errorf("bad pickup branch: %d, message %q", r.Status, fieldError(r.Body, "hold_pickup"))
		}
	})

	t.Run("ErrExpiredCard", func(t *testing.T) {
		r := e.post(t, c, e.patronPath(t, "P0004")+"/holds", url.Values{"item": {"I00001"}, "pickup": {"CEN"}})
		if r.Status != http.StatusConflict || !strings.Contains(r.Body, "expired on") {
			t.Errorf("hold for an expired card: %d", r.Status)
		}
	})
}

func TestHoldPagesNeedLogin(t *testing.T) {
	e := newDemoEnv(t)
	c := e.client(t)
	for _, path := range []string{"/holds", "/holds/1/slip"} {
		r := e.get(t, c, path)
		if r.Status != http.StatusSeeOther || !strings.HasPrefix(r.Location, "/login") {
			t.Errorf("anonymous GET %s: %d to %q", path, r.Status, r.Location)
		}
	}
	for _, path := range []string{"/holds/1/move", "/holds/1/suspend", "/holds/1/resume", "/holds/1/cancel", "/holds/1/expire", "/holds/pull/not-on-shelf", "/patrons/1/holds"} {
		r := e.post(t, c, path, url.Values{"to": {"1"}, "reason": {"x"}})
		if r.Status != http.StatusSeeOther || r.Location != "/login" {
			t.Errorf("anonymous POST %s: %d to %q", path, r.Status, r.Location)
		}
	}
}
