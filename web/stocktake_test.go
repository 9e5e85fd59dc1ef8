package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/db"
)

// TestStocktakeWithoutScript: the stocktake works as plain form posts (no
// JavaScript): start, scan (303 back to the scan page, which lists the scan),
// results, and checking in an item found on the shelf while on loan.
func TestStocktakeWithoutScript(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)
	var call, onLoan string
	if err := e.DB.Read(context.Background(), func(tx *db.Tx) error {
		if err := tx.QueryRow(`SELECT call_number FROM items WHERE barcode = 'I00001'`).Scan(&call); err != nil {
			return err
		}
		return tx.QueryRow(`SELECT barcode FROM items WHERE status = 'on_loan' LIMIT 1`).Scan(&onLoan)
	}); err != nil {
		t.Fatal(err)
	}
	if r := e.post(t, c, "/reports/stocktake", url.Values{"branch": {"1"}, "from": {""}}); r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Body, "Enter the call number") {
		t.Errorf("no range: %d", r.Status)
	}
	r := e.post(t, c, "/reports/stocktake", url.Values{"branch": {"1"}, "from": {call}, "to": {call}})
	if r.Status != http.StatusSeeOther {
		t.Fatalf("start: %d %s", r.Status, r.Body)
	}
	st := r.Location
	for _, b := range []string{"I00001", onLoan, "NOSUCH9"} {
		if r := e.post(t, c, st+"/scan", url.Values{"barcode": {b}}); r.Status != http.StatusSeeOther || r.Location != st {
			t.Fatalf("scan %s: %d %s", b, r.Status, r.Location)
		}
	}
	page := e.get(t, c, st)
	for _, want := range []string{"On the right shelf", "On loan, but on the shelf", "No item has barcode NOSUCH9"} {
		if !strings.Contains(page.Body, want) {
			t.Errorf("the scan page does not say %q", want)
		}
	}
	res := e.get(t, c, st+"/results")
	if res.Status != http.StatusOK || !strings.Contains(res.Body, "Check in "+onLoan) {
		t.Fatalf("results: %d", res.Status)
	}
	if r := e.post(t, c, st+"/checkin", url.Values{"barcode": {onLoan}}); r.Status != http.StatusSeeOther {
		t.Fatalf("checkin: %d", r.Status)
	}
	if res := e.get(t, c, st+"/results"); strings.Contains(res.Body, "Check in "+onLoan) || !strings.Contains(res.Body, "Checked in "+onLoan) {
		t.Errorf("after the checkin, the results still offer it, or do not say it was done")
	}
	// The script's request gets the scan's row alone.
	req := e.formRequest(st+"/scan", url.Values{"barcode": {"I00001"}})
	req.Header.Set("HX-Request", "true")
	if r := do(t, c, req); r.Status != http.StatusOK || !strings.HasPrefix(strings.TrimSpace(r.Body), "<tr") {
		t.Errorf("scripted scan: %d %q", r.Status, r.Body)
	}
}

// TestHistoryPages: an item's and a patron's history list their loans and say
// that the privacy settings are still to come.
func TestHistoryPages(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)
	var itemID, patronID int64
	var barcode string
	if err := e.DB.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT l.item_id, l.patron_id, i.barcode FROM loans l JOIN items i ON i.id = l.item_id
			WHERE l.returned_at IS NOT NULL LIMIT 1`).Scan(&itemID, &patronID, &barcode)
	}); err != nil {
		t.Fatal(err)
	}
	item := e.get(t, c, "/items/"+strconv.FormatInt(itemID, 10)+"/history")
	if item.Status != http.StatusOK || !strings.Contains(item.Body, "Circulation history of "+barcode) || !strings.Contains(item.Body, "issue 16") {
		t.Errorf("item history: %d", item.Status)
	}
	p := e.get(t, c, "/patrons/"+strconv.FormatInt(patronID, 10)+"/history")
	if p.Status != http.StatusOK || !strings.Contains(p.Body, barcode) || !strings.Contains(p.Body, "issue 16") {
		t.Errorf("patron history: %d", p.Status)
	}
	if r := e.get(t, c, "/items/999999/history"); r.Status != http.StatusNotFound {
		t.Errorf("no such item: %d", r.Status)
	}
}
