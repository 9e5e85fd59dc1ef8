package web_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// deskMessages cuts the Check in page's messages out of a page or fragment: one
// string a message, newest first.
func deskMessages(body string) []string {
	i := strings.Index(body, `id="desk-messages"`)
	if i < 0 {
		return nil
	}
	rest := body[i:]
	var out []string
	for {
		j := strings.Index(rest, "<section")
		if j < 0 {
			return out
		}
		rest = rest[j:]
		k := strings.Index(rest, "</section>")
		out = append(out, html.UnescapeString(rest[:k]))
		rest = rest[k:]
		if end := strings.Index(rest, "</section></div>"); end == 0 {
			return out
		}
	}
}

var checkinIDRE = regexp.MustCompile(`data-checkin="(\d+)"`)

// TestCheckinMessagesStay: what a return asks of the desk (a hold found here, a
// hold transit, a transfer home) stays on the Check in page, scans after it and a
// reload notwithstanding, until staff acknowledge it, through a plain form post
// or the desk script; each row keeps its slips and says where the copy goes.
func TestCheckinMessagesStay(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)

	shelf := freeCopy(t, e, "CEN")
	placeHoldAt(t, e, "P0003", shelf, "CEN")
	travel := freeCopy(t, e, "CEN")
	placeHoldAt(t, e, "P0003", travel, "WES")
	east := freeCopy(t, e, "EAS")
	plain := freeCopy(t, e, "CEN")

	checkin := func(barcode string) int64 {
		t.Helper()
		r := e.post(t, c, "/checkin", url.Values{"barcode": {barcode}})
		if r.Status != http.StatusSeeOther || !strings.HasPrefix(r.Location, "/checkin?scan=") {
			t.Fatalf("checkin %s: %d to %q", barcode, r.Status, r.Location)
		}
		id, _ := strconv.ParseInt(strings.TrimPrefix(r.Location, "/checkin?scan="), 10, 64)
		return id
	}
	shelfID := checkin(shelf)
	travelID := checkin(travel)
	eastID := checkin(east)
	checkin(plain)
	checkin(plain)

	holdID := func(barcode string) string {
		return queryString(t, e, `SELECT CAST(h.id AS TEXT) FROM holds h JOIN items i ON i.id = h.trapped_item_id WHERE i.barcode = ?`, barcode)
	}
	t.Run("Stay", func(t *testing.T) {
		for _, path := range []string{"/checkin?scan=" + strconv.FormatInt(shelfID+4, 10), "/checkin"} {
			r := e.get(t, c, path)
			m := deskMessages(r.Body)
			if len(m) != 3 {
				t.Fatalf("GET %s: %d messages, want 3:\n%s", path, len(m), strings.Join(m, "\n"))
			}
			mustContain(t, "the transfer's message", m[0], "Transfer to Eastside", east, `href="/transfers/slip/`+strconv.FormatInt(eastID, 10)+`"`, "Acknowledge")
			mustContain(t, "the hold transit's message", m[1], "Hold found", travel, "Send it to <strong>Westside</strong>",
				`href="/holds/`+holdID(travel)+`/slip"`, `href="/transfers/slip/`+strconv.FormatInt(travelID, 10)+`"`, "Acknowledge")
			mustContain(t, "the hold shelf's message", m[2], "Hold found", shelf, "Put it on the hold shelf here at <strong>Central</strong>",
				`href="/holds/`+holdID(shelf)+`/slip"`, "Acknowledge")
			if strings.Contains(m[2], "/transfers/slip/") {
				t.Error("a hold found here has a transit slip")
			}
			for _, msg := range m {
				if strings.Contains(msg, `role="alert"`) {
					t.Errorf("GET %s: an older message is announced again: %.200s", path, msg)
				}
			}
		}
	})

	t.Run("RowsKeepSlips", func(t *testing.T) {
		r := html.UnescapeString(e.get(t, c, "/checkin").Body)
		list := r[strings.Index(r, `id="scan-list"`):]
		mustContain(t, "the list", list,
			"send it to <strong>Westside</strong> for pickup", `href="/holds/`+holdID(travel)+`/slip">Hold slip`, `href="/transfers/slip/`+strconv.FormatInt(travelID, 10)+`">Transit slip`,
			"hold shelf at Central.", `href="/holds/`+holdID(shelf)+`/slip">Hold slip`,
			"Transfer to Eastside", `href="/transfers/slip/`+strconv.FormatInt(eastID, 10)+`">Transit slip`)
	})

	t.Run("AcknowledgeWithoutScript", func(t *testing.T) {
		r := e.post(t, c, "/checkin/acknowledge", url.Values{"id": {strconv.FormatInt(shelfID, 10)}})
		if r.Status != http.StatusSeeOther || r.Location != "/checkin" {
			t.Fatalf("acknowledge: %d to %q", r.Status, r.Location)
		}
		if n := e.count(t, `SELECT count(*) FROM checkins WHERE id = ? AND acked_at IS NOT NULL AND acked_by = 'desk'`, shelfID); n != 1 {
			t.Error("the acknowledgement is not recorded")
		}
		m := deskMessages(e.get(t, c, "/checkin").Body)
		if len(m) != 2 || strings.Contains(strings.Join(m, ""), shelf) {
			t.Errorf("after acknowledging %s: %d messages:\n%s", shelf, len(m), strings.Join(m, "\n"))
		}
	})

	t.Run("DeskScript", func(t *testing.T) {
		// A plain return leaves the messages as they are: no swap of them.
		other := freeCopy(t, e, "CEN")
		r := e.scan(t, c, "/checkin", url.Values{"barcode": {other}})
		row(t, r, http.StatusOK, "done", other)
		if strings.Contains(r.Body, "desk-messages") {
			t.Errorf("a plain return swaps the messages:\n%s", r.Body)
		}
		// A return that needs action brings them all, itself first and announced.
		west := freeCopy(t, e, "WES")
		r = e.scan(t, c, "/checkin", url.Values{"barcode": {west}})
		row(t, r, http.StatusOK, "done", west)
		m := deskMessages(r.Body)
		if len(m) != 3 || !strings.Contains(m[0], "Transfer to Westside") || !strings.Contains(m[0], `role="alert"`) ||
			!strings.Contains(m[1], east) || strings.Contains(m[1], `role="alert"`) || !strings.Contains(m[2], travel) {
			t.Fatalf("the messages after a transfer:\n%s", strings.Join(m, "\n"))
		}
		westID := checkinIDRE.FindStringSubmatch(m[0])[1]

		r = e.scan(t, c, "/checkin/acknowledge", url.Values{"id": {westID}})
		if r.Status != http.StatusOK || !strings.HasPrefix(r.Body, `<div id="desk-messages"`) {
			t.Fatalf("acknowledge by the desk script: %d\n%.300s", r.Status, r.Body)
		}
		if m := deskMessages(r.Body); len(m) != 2 || strings.Contains(strings.Join(m, ""), west) {
			t.Errorf("after acknowledging %s: %s", west, strings.Join(m, "\n"))
		}
		if n := e.count(t, `SELECT count(*) FROM checkins WHERE id = ? AND acked_at IS NOT NULL`, westID); n != 1 {
			t.Error("the acknowledgement is not recorded")
		}
	})

	t.Run("ErrNotOnList", func(t *testing.T) {
		r := e.post(t, c, "/checkin/acknowledge", url.Values{"id": {"999999"}})
		if r.Status != http.StatusNotFound || !strings.Contains(r.Body, "not on this desk") || len(deskMessages(r.Body)) != 2 {
			t.Errorf("acknowledging what is not on the list: %d", r.Status)
		}
	})

	t.Run("ClearedWithTheList", func(t *testing.T) {
		e.post(t, c, "/checkin/clear", nil)
		if m := deskMessages(e.get(t, c, "/checkin").Body); len(m) != 0 {
			t.Errorf("after Clear list: %d messages", len(m))
		}
		if n := e.count(t, `SELECT count(*) FROM checkins WHERE id IN (?, ?) AND acked_at IS NOT NULL AND acked_by = 'desk'`, travelID, eastID); n != 2 {
			t.Errorf("Clear list acknowledged %d of the 2 messages left", n)
		}
	})
}

// TestCheckinReceiptPerPatron: two patrons' returns on one desk's list make two
// receipts; "Checkin receipt" prints the latest borrower's.
func TestCheckinReceiptPerPatron(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)
	var items []string
	for i := 0; i < 3; i++ {
		items = append(items, queryString(t, e, `SELECT i.barcode FROM items i WHERE i.status = 'available' AND i.home_branch_id = 1
			AND i.current_branch_id = 1 AND i.barcode NOT IN (?, ?)
			AND NOT EXISTS (SELECT 1 FROM holds h WHERE h.record_id = i.record_id AND h.status IN ('queued', 'in_transit', 'waiting'))
			ORDER BY i.id LIMIT 1`, append(items, "", "")[0], append(items, "", "")[1]))
	}
	lend := func(card string, barcodes ...string) {
		t.Helper()
		e.post(t, c, "/checkout/patron", url.Values{"card": {card}})
		for _, bc := range barcodes {
			if r := e.post(t, c, "/checkout", url.Values{"barcode": {bc}}); r.Status != http.StatusSeeOther {
				t.Fatalf("checkout %s to %s: %d", bc, card, r.Status)
			}
		}
		e.post(t, c, "/checkout/done", nil)
	}
	lend("P0001", items[0], items[2])
	lend("P0003", items[1])
	for _, bc := range items {
		e.post(t, c, "/checkin", url.Values{"barcode": {bc}})
	}
	p1, p3 := queryString(t, e, `SELECT CAST(id AS TEXT) FROM patrons WHERE card = 'P0001'`), queryString(t, e, `SELECT CAST(id AS TEXT) FROM patrons WHERE card = 'P0003'`)

	page := html.UnescapeString(e.get(t, c, "/checkin").Body)
	mustContain(t, "the Check in page", page, `href="/checkin/receipt?patron=`+p1+`"`, `href="/checkin/receipt?patron=`+p3+`"`, ">Checkin receipt<")

	slip := func(r response) string {
		t.Helper()
		if r.Status != http.StatusOK {
			t.Fatalf("receipt: %d", r.Status)
		}
		b := html.UnescapeString(r.Body)
		return b[strings.Index(b, `class="slip"`):strings.Index(b, "Thank you.")]
	}
	r := e.get(t, c, "/checkin/receipt")
	latest := slip(r)
	mustContain(t, "the latest borrower's receipt", latest, "Alex Reader (P0001)", "<td>"+items[0]+"</td>", "<td>"+items[2]+"</td>")
	if strings.Contains(latest, items[1]) || strings.Contains(latest, "Casey Waiting") {
		t.Errorf("P0001's receipt has another patron's return:\n%s", latest)
	}
	mustContain(t, "the links to the others' receipts", r.Body, `href="/checkin/receipt?patron=`+p3+`"`)

	other := slip(e.get(t, c, "/checkin/receipt?patron="+p3))
	mustContain(t, "P0003's receipt", other, "Casey Waiting (P0003)", "<td>"+items[1]+"</td>")
	if strings.Contains(other, items[0]) || strings.Contains(other, items[2]) {
		t.Errorf("P0003's receipt has P0001's returns:\n%s", other)
	}

	if r := e.get(t, c, "/checkin/receipt?patron=x"); r.Status != http.StatusNotFound {
		t.Errorf("a receipt for patron x: %d, want 404", r.Status)
	}
}

// TestTransferSlipOfHoldPassedOn: a copy passed to the next hold, at another
// branch, when its hold on this branch's shelf was cancelled travels with no
// checkin behind it; the Transfers page still prints its slip.
func TestTransferSlipOfHoldPassedOn(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)
	copy := freeCopy(t, e, "CEN")
	placeHoldAt(t, e, "P0003", copy, "CEN")
	placeHoldAt(t, e, "P0001", copy, "WES")
	if res := checkinAt(t, e, "CEN", copy); res.Hold == nil || res.Hold.InTransit {
		t.Fatalf("%s is not on the hold shelf: %+v", copy, res)
	}
	first := queryString(t, e, `SELECT CAST(h.id AS TEXT) FROM holds h JOIN items i ON i.id = h.trapped_item_id WHERE i.barcode = ?`, copy)
	if r := e.post(t, c, "/holds/"+first+"/cancel", url.Values{"reason": {"patron moved"}}); r.Status != http.StatusSeeOther {
		t.Fatalf("cancel hold %s: %d\n%.400s", first, r.Status, r.Body)
	}
	item := queryString(t, e, `SELECT CAST(id AS TEXT) FROM items WHERE barcode = ? AND status = 'in_transit'`, copy)

	r := e.get(t, c, "/transfers")
	slipURL := "/transfers/item/" + item + "/slip"
	mustContain(t, "the Transfers page", html.UnescapeString(r.Body), copy, "Hold for Alex Reader (P0001) – pickup at Westside", `href="`+slipURL+`"`)
	s := e.get(t, c, slipURL)
	if s.Status != http.StatusOK {
		t.Fatalf("GET %s: %d", slipURL, s.Status)
	}
	mustContain(t, "the transit slip", html.UnescapeString(s.Body), `class="slip transfer-slip"`, "Transfer to Westside", copy, "Central",
		"Hold for Alex Reader (P0001) – pickup at Westside")
}
