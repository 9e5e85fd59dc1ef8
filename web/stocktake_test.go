package web_test

import (
	"context"
	"database/sql"
	"fmt"
	"html"
	_ "modernc.org/sqlite"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
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

// TestHistoryPages: an item's and a patron's history list their loans; an
// anonymised loan (no patron) shows on the item's page as "Anonymised",
// without a link to anyone, and leaves the patron's page.
func TestHistoryPages(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)
	var itemID, patronID, loanID int64
	var barcode string
	if err := e.DB.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT l.id, l.item_id, l.patron_id, i.barcode FROM loans l JOIN items i ON i.id = l.item_id
			WHERE l.returned_at IS NOT NULL
			AND (SELECT count(*) FROM loans o WHERE o.item_id = l.item_id AND o.patron_id = l.patron_id) = 1 LIMIT 1`).Scan(&loanID, &itemID, &patronID, &barcode)
	}); err != nil {
		t.Fatal(err)
	}
	itemURL := "/items/" + strconv.FormatInt(itemID, 10) + "/history"
	patronURL := "/patrons/" + strconv.FormatInt(patronID, 10) + "/history"
	item := e.get(t, c, itemURL)
	if item.Status != http.StatusOK || !strings.Contains(item.Body, "Circulation history of "+barcode) ||
		!strings.Contains(item.Body, `href="/patrons/`+strconv.FormatInt(patronID, 10)+`"`) || strings.Contains(item.Body, ">Anonymised<") {
		t.Errorf("item history: %d, want the patron linked", item.Status)
	}
	p := e.get(t, c, patronURL)
	if p.Status != http.StatusOK || !strings.Contains(p.Body, barcode) {
		t.Errorf("patron history: %d, want %s listed", p.Status, barcode)
	}
	if r := e.get(t, c, "/items/999999/history"); r.Status != http.StatusNotFound {
		t.Errorf("no such item: %d", r.Status)
	}

	// Anonymise the loan as the daily anonymisation does (its patron gone from it). On SQLite
	// through a connection of its own with foreign keys off, the loan pointing
	// at no patron (a database before migration 0013); PostgreSQL enforces
	// every foreign key and has no such database, so there (engine-specific:
	// the counterpart) the loan is anonymised as today, patron_id NULL.
	if dbtest.Engine() == db.Postgres {
		if err := e.DB.Write(context.Background(), func(tx *db.Tx) error {
			_, err := tx.Exec(`UPDATE loans SET patron_id = NULL WHERE id = ?`, loanID)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	} else {
		raw, err := sql.Open("sqlite", e.DB.Path()+"?_pragma=foreign_keys(0)&_pragma=busy_timeout(5000)")
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		if _, err := raw.Exec(`UPDATE loans SET patron_id = -1 WHERE id = ?`, loanID); err != nil {
			t.Fatal(err)
		}
	}
	item = e.get(t, c, itemURL)
	if item.Status != http.StatusOK || !strings.Contains(item.Body, ">Anonymised<") ||
		strings.Contains(item.Body, `href="/patrons/`+strconv.FormatInt(patronID, 10)+`"`) {
		t.Errorf("item history after anonymising: %d, want \"Anonymised\" and no link to the patron", item.Status)
	}
	if p := e.get(t, c, patronURL); p.Status != http.StatusOK || strings.Contains(p.Body, barcode) {
		t.Errorf("patron history after anonymising: %d, still lists %s", p.Status, barcode)
	}
}

// TestStocktakeCheckinRefusesOthers: the results' check-in takes only an item
// scanned in that stocktake and on loan, lost or missing; another barcode, an
// item on the shelf, or a stocktake that does not exist is refused, and the item
// stays on loan.
func TestStocktakeCheckinRefusesOthers(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)
	ctx := context.Background()
	var call string
	var onLoan []string
	if err := e.DB.Read(ctx, func(tx *db.Tx) error {
		if err := tx.QueryRow(`SELECT call_number FROM items WHERE barcode = 'I00001'`).Scan(&call); err != nil {
			return err
		}
		rows, err := tx.Query(`SELECT barcode FROM items WHERE status = 'on_loan' ORDER BY barcode LIMIT 2`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var b string
			if err := rows.Scan(&b); err != nil {
				return err
			}
			onLoan = append(onLoan, b)
		}
		return rows.Err()
	}); err != nil {
		t.Fatal(err)
	}
	if len(onLoan) != 2 {
		t.Fatalf("the demo library has %d items on loan, want 2", len(onLoan))
	}
	r := e.post(t, c, "/reports/stocktake", url.Values{"branch": {"1"}, "from": {call}, "to": {call}})
	if r.Status != http.StatusSeeOther {
		t.Fatalf("start: %d %s", r.Status, r.Body)
	}
	st := r.Location
	for _, b := range []string{"I00001", onLoan[0]} {
		if r := e.post(t, c, st+"/scan", url.Values{"barcode": {b}}); r.Status != http.StatusSeeOther {
			t.Fatalf("scan %s: %d", b, r.Status)
		}
	}
	status := func(b string) (s string) {
		if err := e.DB.Read(ctx, func(tx *db.Tx) error {
			return tx.QueryRow(`SELECT status FROM items WHERE barcode = ?`, b).Scan(&s)
		}); err != nil {
			t.Fatal(err)
		}
		return s
	}
	for name, c2 := range map[string]struct {
		path, barcode string
		want          int
		says          string
	}{
		"NotScanned":   {st + "/checkin", onLoan[1], http.StatusUnprocessableEntity, "was not scanned in this stocktake"},
		"OnShelf":      {st + "/checkin", "I00001", http.StatusUnprocessableEntity, "not on loan, lost or missing"},
		"NoStocktake":  {"/reports/stocktake/999999/checkin", onLoan[0], http.StatusNotFound, "There is no stocktake 999999"},
		"EmptyBarcode": {st + "/checkin", "", http.StatusUnprocessableEntity, ""},
	} {
		t.Run(name, func(t *testing.T) {
			r := e.post(t, c, c2.path, url.Values{"barcode": {c2.barcode}})
			if r.Status != c2.want || !strings.Contains(r.Body, c2.says) {
				t.Errorf("%d, want %d saying %q", r.Status, c2.want, c2.says)
			}
		})
	}
	if s := status(onLoan[1]); s != "on_loan" {
		t.Errorf("the item not scanned is %s now, want still on_loan", s)
	}
	if s := status(onLoan[0]); s != "on_loan" {
		t.Errorf("the scanned item was checked in under another stocktake: %s", s)
	}
	// The scanned item on loan is checked in from its own stocktake.
	if r := e.post(t, c, st+"/checkin", url.Values{"barcode": {onLoan[0]}}); r.Status != http.StatusSeeOther {
		t.Fatalf("checkin: %d %s", r.Status, r.Body)
	}
	if s := status(onLoan[0]); s == "on_loan" {
		t.Errorf("the scanned item is still on loan")
	}
}

// TestBatchFromLists: a stocktake's missing items and a report's items go to
// the batch edit in one press: the stocktake's to the preview of marking them
// Missing, a report's (the overdue items, the items not borrowed) to the form,
// filled in; nothing changes before Apply. A preview with no change chosen is
// refused: only the list route shows the form without one.
func TestBatchFromLists(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)
	list := regexp.MustCompile(`<form method="post" action="(/items/batch/[a-z]+)" class="batch-from"><input type="hidden" name="barcodes" value="([^"]*)">\s*(?:<input type="hidden" name="field" value="([^"]*)">\s*<input type="hidden" name="value" value="([^"]*)">\s*)?<button type="submit">([^<]*)</button>`)

	r := e.post(t, c, "/reports/stocktake", url.Values{"branch": {"1"}, "from": {"0"}, "to": {"ZZZ"}})
	if r.Status != http.StatusSeeOther {
		t.Fatalf("start: %d %s", r.Status, r.Body)
	}
	if r := e.post(t, c, r.Location+"/scan", url.Values{"barcode": {"I00001"}}); r.Status != http.StatusSeeOther {
		t.Fatalf("scan: %d", r.Status)
	}
	res := e.get(t, c, r.Location+"/results")
	m := list.FindStringSubmatch(res.Body)
	if m == nil {
		t.Fatalf("the stocktake's results offer no batch edit of the missing items")
	}
	missing := strings.Split(html.UnescapeString(m[2]), "\n")
	if m[1] != "/items/batch/preview" || len(missing) < 2 || slices.Contains(missing, "I00001") || m[3] != catalog.BatchStatus || m[4] != catalog.StatusMissing {
		t.Fatalf("the missing items' form to %s: %d barcodes (I00001, scanned, among them: %v), change %s %s", m[1], len(missing), slices.Contains(missing, "I00001"), m[3], m[4])
	}
	if !strings.Contains(m[5], fmt.Sprintf("Mark the %d missing items Missing", len(missing))) {
		t.Errorf("the button says %q", m[5])
	}
	before := e.count(t, `SELECT count(*) FROM items WHERE status = 'missing'`)
	p := e.post(t, c, m[1], url.Values{"barcodes": {html.UnescapeString(m[2])}, "field": {m[3]}, "value": {m[4]}})
	if p.Status != http.StatusOK {
		t.Fatalf("preview: %d", p.Status)
	}
	mustContain(t, "the preview", squashed(p.Body), "Preview: Status to “Missing”", "Apply to ")
	if n := e.count(t, `SELECT count(*) FROM items WHERE status = 'missing'`); n != before {
		t.Errorf("the preview marked %d items missing", n-before)
	}

	// A preview without a change chosen is bad input, refused beside the
	// field, whatever page the list came from.
	p = e.post(t, c, "/items/batch/preview", url.Values{"barcodes": {html.UnescapeString(m[2])}})
	if p.Status != http.StatusUnprocessableEntity || strings.Contains(p.Body, "Preview:") {
		t.Fatalf("a preview with no field: %d, want 422 and no preview", p.Status)
	}
	if msg := fieldError(p.Body, "field"); !strings.Contains(msg, "Choose what to change") {
		t.Errorf("message beside the change: %q", msg)
	}

	for _, report := range []struct{ name, path string }{
		{"Overdue", "/reports/overdue?branch="},
		{"NotBorrowed", "/reports/not-borrowed?since=2099-01-01"},
	} {
		t.Run(report.name, func(t *testing.T) {
			rep := e.get(t, c, report.path)
			m := list.FindStringSubmatch(rep.Body)
			if m == nil {
				t.Fatalf("the report offers no batch edit of its items")
			}
			items := strings.Split(html.UnescapeString(m[2]), "\n")
			if m[1] != "/items/batch/list" || m[3] != "" || !strings.Contains(m[5], "item") || len(items) == 0 || items[0] == "" {
				t.Fatalf("the report's form to %s: %q, change %q, button %q", m[1], items, m[3], m[5])
			}
			for _, b := range items {
				if !strings.Contains(rep.Body, "<td>"+html.EscapeString(b)+"</td>") {
					t.Errorf("the form sends %q, not a barcode in the report's table", b)
				}
			}
			f := e.post(t, c, m[1], url.Values{"barcodes": {html.UnescapeString(m[2])}})
			if f.Status != http.StatusOK || strings.Contains(f.Body, "Preview:") {
				t.Fatalf("the report's items: %d, or a preview without a change chosen", f.Status)
			}
			if !strings.Contains(f.Body, ">"+html.EscapeString(html.UnescapeString(m[2]))+"</textarea>") {
				t.Errorf("the batch form is not filled in with the report's %d barcodes", len(items))
			}
		})
	}
}
