package web_test

import (
	"context"
	"html"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/holds"
)

// checkinAt checks barcode in at the branch with code, as a desk there would, and
// returns the checkin.
func checkinAt(t *testing.T, e *testEnv, branchCode, barcode string) circulation.CheckinResult {
	t.Helper()
	branch, err := strconv.ParseInt(queryString(t, e, `SELECT id FROM branches WHERE code = ?`, branchCode), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	res, err := circulation.NewService(e.DB, nil).Checkin(context.Background(), circulation.CheckinRequest{
		Actor: stacks.Actor{Name: "test", BranchID: branch}, Barcode: barcode,
	})
	if err != nil {
		t.Fatalf("checkin %s at %s: %v", barcode, branchCode, err)
	}
	return res
}

// freeCopy returns an available copy at home at the branch with code whose title
// nobody is waiting for: checked in elsewhere, it is sent home.
func freeCopy(t *testing.T, e *testEnv, branchCode string) string {
	t.Helper()
	return queryString(t, e, `SELECT i.barcode FROM items i JOIN branches b ON b.id = i.home_branch_id
		WHERE b.code = ? AND i.status = 'available' AND i.current_branch_id = i.home_branch_id
		  AND NOT EXISTS (SELECT 1 FROM holds h WHERE h.record_id = i.record_id AND h.status IN ('queued', 'in_transit', 'waiting'))
		ORDER BY i.id LIMIT 1`, branchCode)
}

// transferCheckin sends a copy from Eastside home from Central, and returns the id of
// the checkin: a transit slip.
func transferCheckin(t *testing.T, e *testEnv) int64 {
	t.Helper()
	res := checkinAt(t, e, "CEN", freeCopy(t, e, "EAS"))
	if res.TransferTo == nil {
		t.Fatalf("checkin sent nothing: %+v", res)
	}
	return res.ID
}

// transferSlipPath is the transit slip of a checkin.
func transferSlipPath(id int64) string { return "/transfers/slip/" + strconv.FormatInt(id, 10) }

func TestTransfers(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)

	e.get(t, c, "/transfers") // the session's first page may write it
	r := e.get(t, c, "/transfers")
	if r.Status != http.StatusOK {
		t.Fatalf("GET /transfers: %d", r.Status)
	}
	emptyCount := sqlCount(t, r)

	t.Run("Empty", func(t *testing.T) {
		mustContain(t, "the Transfers page", r.Body, "<h1>Transfers</h1>", "Coming to Central", "Sent from Central",
			"Nothing is on its way to Central.", "Nothing sent from Central is in transit.")
		if strings.Contains(r.Body, `<table class="transfers"`) {
			t.Error("an empty Transfers page shows a table")
		}
	})

	t.Run("Navigation", func(t *testing.T) {
		nav := r.Body[:strings.Index(r.Body, "<main")]
		want := []string{">Check out<", ">Check in<", ">Patrons<", ">Search<", ">Holds<", ">Transfers<"}
		at := 0
		for _, w := range want {
			i := strings.Index(nav[at:], w)
			if i < 0 {
				t.Fatalf("the navigation lacks %s after the entries before it", w)
			}
			at += i
		}
		if !strings.Contains(nav, `href="/transfers"`) || !strings.Contains(nav, `aria-current="page"`) {
			t.Error("the Transfers entry does not link to /transfers, or is not marked current")
		}
	})

	// Three transfers: home from Central to Eastside; to Westside for a hold; and a
	// Central copy checked in at Eastside, coming home.
	east := freeCopy(t, e, "EAS")
	home := checkinAt(t, e, "CEN", east)
	recordID := queryString(t, e, `SELECT record_id FROM items WHERE barcode = 'I00001'`)
	err := e.DB.Write(context.Background(), func(tx *db.Tx) error {
		var rec int64
		if err := tx.QueryRow(`SELECT record_id FROM items WHERE barcode = 'I00002'`).Scan(&rec); err != nil {
			return err
		}
		_, err := holds.Place(tx, holds.PlaceRequest{Actor: stacks.System, RecordID: rec, PatronCard: "P0003", PickupBranchCode: "WES"}, time.UTC)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	hold := checkinAt(t, e, "CEN", "I00002")
	if hold.Hold == nil || !hold.Hold.InTransit {
		t.Fatalf("I00002 does not travel for the hold: %+v", hold)
	}
	coming := checkinAt(t, e, "EAS", "I00001")
	if coming.TransferTo == nil || coming.TransferTo.Name != "Central" {
		t.Fatalf("I00001 is not sent home: %+v", coming)
	}

	r = e.get(t, c, "/transfers")
	if r.Status != http.StatusOK {
		t.Fatalf("GET /transfers: %d", r.Status)
	}

	t.Run("Lists", func(t *testing.T) {
		in, out := section(r.Body, "incoming-title"), section(r.Body, "outgoing-title")
		mustContain(t, "Coming to Central", in, "I00001", "Eastside", "Returning home", `href="/records/`+recordID+`"`,
			`href="`+transferSlipPath(coming.ID)+`"`, "2026-11-30 10:00")
		mustContain(t, "Sent from Central", out, east, "Eastside", "Returning home", `href="`+transferSlipPath(home.ID)+`"`,
			"I00002", "Westside", "Hold for Casey Waiting (P0003) – pickup at Westside", `href="`+transferSlipPath(hold.ID)+`"`, home.Title)
		if strings.Contains(in, east) || strings.Contains(out, "I00001") {
			t.Error("an item is listed on the wrong side")
		}
		if strings.Contains(r.Body, "Nothing is on its way") || strings.Contains(r.Body, "Nothing sent from") {
			t.Error("an empty state shows beside the transfers")
		}
	})

	t.Run("NoQueryPerRow", func(t *testing.T) {
		if got := sqlCount(t, r); got > emptyCount {
			t.Errorf("three transfers ran %d statements, none %d: a query per row", got, emptyCount)
		}
	})

	t.Run("RecordSaysWhere", func(t *testing.T) {
		rec := e.get(t, c, "/records/"+queryString(t, e, `SELECT record_id FROM items WHERE barcode = 'I00002'`))
		mustContain(t, "the record page", rec.Body, "In transit to Westside", "(from Central)")
		item := e.get(t, c, "/items/"+queryString(t, e, `SELECT id FROM items WHERE barcode = 'I00002'`)+"/edit")
		mustContain(t, "the item form", item.Body, "In transit to Westside")
	})

	t.Run("SlipHold", func(t *testing.T) {
		s := e.get(t, c, transferSlipPath(hold.ID))
		if s.Status != http.StatusOK {
			t.Fatalf("transit slip: %d", s.Status)
		}
		body := html.UnescapeString(s.Body)
		mustContain(t, "the transit slip", body, `class="slip transfer-slip"`, "Transfer to Westside", hold.Title, "I00002",
			hold.CallNumber, "Central", "2026-11-30 10:00", "Hold for Casey Waiting (P0003) – pickup at Westside",
			`class="print-button" hidden`)
		if hasInlineScript(s.Body) {
			t.Error("the slip has inline script")
		}
	})

	t.Run("SlipHome", func(t *testing.T) {
		s := e.get(t, c, transferSlipPath(home.ID))
		if s.Status != http.StatusOK {
			t.Fatalf("transit slip: %d", s.Status)
		}
		mustContain(t, "the transit slip", html.UnescapeString(s.Body), "Transfer to Eastside", east, "Returning home", "Central")
		if strings.Contains(s.Body, "Hold for") {
			t.Error("a slip home names a hold")
		}
	})

	t.Run("ErrSlipNotFound", func(t *testing.T) {
		for path, want := range map[string]string{
			"/transfers/slip/987654": "There is no checkin 987654",
			"/transfers/slip/abc":    "There is no transit slip at /transfers/slip/abc",
		} {
			s := e.get(t, c, path)
			if s.Status != http.StatusNotFound || !strings.Contains(s.Body, want) {
				t.Errorf("GET %s: %d, want 404 saying %q", path, s.Status, want)
			}
		}
	})

	t.Run("ErrSlipOfNoTransfer", func(t *testing.T) {
		stay := checkinAt(t, e, "CEN", "I00003")
		s := e.get(t, c, transferSlipPath(stay.ID))
		if s.Status != http.StatusNotFound || !strings.Contains(s.Body, "sent it nowhere") {
			t.Errorf("slip of a checkin that sent nothing: %d, want 404 with the reason", s.Status)
		}
	})

	t.Run("ArrivalsLeaveTheLists", func(t *testing.T) {
		checkinAt(t, e, "EAS", east)
		checkinAt(t, e, "WES", "I00002")
		checkinAt(t, e, "CEN", "I00001")
		if got := queryString(t, e, `SELECT status FROM items WHERE barcode = 'I00002'`); got != "on_hold_shelf" {
			t.Errorf("I00002 at its pickup branch: %s, want on the hold shelf", got)
		}
		r := e.get(t, c, "/transfers")
		mustContain(t, "the Transfers page", r.Body, "Nothing is on its way to Central.", "Nothing sent from Central is in transit.")
		// The slip still describes the transfer that was.
		if s := e.get(t, c, transferSlipPath(home.ID)); s.Status != http.StatusOK {
			t.Errorf("slip after arrival: %d", s.Status)
		}
	})
}
