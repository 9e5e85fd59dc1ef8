package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/db"
)

// newTitle adds a record with copies of the barcodes and returns the ids of the
// record and its first copy.
func (e *testEnv) newTitle(t *testing.T, title string, barcodes ...string) (recordID, itemID int64) {
	t.Helper()
	err := e.DB.Write(context.Background(), func(tx *db.Tx) (err error) {
		if recordID, err = catalog.CreateRecord(tx, stacks.System, catalog.RecordInput{Title: title}); err != nil {
			return err
		}
		for i, b := range barcodes {
			id, err := catalog.AddItem(tx, stacks.System, recordID, catalog.ItemInput{Barcode: b, ItemTypeCode: "BOOK", HomeBranchCode: "CEN"})
			if err != nil {
				return err
			}
			if i == 0 {
				itemID = id
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return recordID, itemID
}

// TestCatalogMaintenancePages: withdrawing, deleting and merging go through a
// confirmation page (a GET changes nothing) and a POST; a merged record's
// address redirects; a batch edit is previewed, applied and undone.
func TestCatalogMaintenancePages(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)

	t.Run("Withdraw", func(t *testing.T) {
		rec, item := e.newTitle(t, "Withdrawn Zeppelins", "WEB-W1")
		path := fmt.Sprintf("/items/%d/withdraw", item)
		r := e.get(t, c, path)
		if r.Status != http.StatusOK {
			t.Fatalf("GET %s: %d", path, r.Status)
		}
		mustContain(t, "the withdraw page", r.Body, `action="`+path+`"`, "Withdraw WEB-W1</button>", `name="reason"`)
		r = e.post(t, c, path, url.Values{"reason": {""}})
		if r.Status != http.StatusUnprocessableEntity || !strings.Contains(fieldError(r.Body, "reason"), "Say why") {
			t.Fatalf("no reason: %d, %q", r.Status, fieldError(r.Body, "reason"))
		}
		r = e.post(t, c, path, url.Values{"reason": {"Weeded"}})
		if r.Status != http.StatusSeeOther || r.Location != fmt.Sprintf("/records/%d", rec) {
			t.Fatalf("withdraw: %d to %q", r.Status, r.Location)
		}
		if got := queryString(t, e, `SELECT status || ' ' || withdrawn_reason FROM items WHERE id = ?`, item); got != "withdrawn Weeded" {
			t.Errorf("item: %q", got)
		}
	})

	t.Run("DeleteItem", func(t *testing.T) {
		rec, item := e.newTitle(t, "Mistaken Zeppelins", "WEB-X1")
		path := fmt.Sprintf("/items/%d/delete", item)
		r := e.get(t, c, path)
		if r.Status != http.StatusOK || !strings.Contains(r.Body, "Delete WEB-X1</button>") {
			t.Fatalf("GET %s: %d", path, r.Status)
		}
		if n := e.count(t, `SELECT count(*) FROM items WHERE id = ?`, item); n != 1 {
			t.Fatal("a GET deleted the item")
		}
		r = e.post(t, c, path, nil)
		if r.Status != http.StatusSeeOther || r.Location != fmt.Sprintf("/records/%d", rec) {
			t.Fatalf("delete: %d to %q", r.Status, r.Location)
		}
		if n := e.count(t, `SELECT count(*) FROM items WHERE id = ?`, item); n != 0 {
			t.Fatal("the item is still there")
		}
		// A copy once lent: refused, with what to do instead.
		lent := queryString(t, e, `SELECT CAST(min(l.item_id) AS TEXT) FROM loans l JOIN items i ON i.id = l.item_id
			WHERE l.returned_at IS NOT NULL AND i.status = 'available'`)
		r = e.post(t, c, "/items/"+lent+"/delete", nil)
		if r.Status != http.StatusConflict || !strings.Contains(squashed(r.Body), "Withdraw it instead") {
			t.Errorf("deleting a copy once lent: %d\n%s", r.Status, squashed(r.Body))
		}
	})

	t.Run("DeleteRecord", func(t *testing.T) {
		rec, _ := e.newTitle(t, "Deleted Zeppelins", "WEB-D1", "WEB-D2")
		path := fmt.Sprintf("/records/%d/delete", rec)
		r := e.get(t, c, path)
		if r.Status != http.StatusOK {
			t.Fatalf("GET %s: %d", path, r.Status)
		}
		mustContain(t, "the delete page", r.Body, "WEB-D1", "WEB-D2", "Delete the record and its 2 copies</button>")
		if n := e.count(t, `SELECT count(*) FROM records WHERE id = ?`, rec); n != 1 {
			t.Fatal("a GET deleted the record")
		}
		r = e.post(t, c, path, url.Values{"holds": {"cancel"}})
		if r.Status != http.StatusSeeOther || r.Location != "/search" {
			t.Fatalf("delete: %d to %q", r.Status, r.Location)
		}
		if n := e.count(t, `SELECT count(*) FROM records WHERE id = ?`, rec); n != 0 {
			t.Fatal("the record is still there")
		}
		// A record whose copy was lent cannot be deleted: the page says so.
		lent := queryString(t, e, `SELECT CAST(min(i.record_id) AS TEXT) FROM items i JOIN loans l ON l.item_id = i.id`)
		r = e.get(t, c, "/records/"+lent+"/delete")
		if r.Status != http.StatusOK || !strings.Contains(squashed(r.Body), "cannot be") || strings.Contains(r.Body, "Delete the record and its") {
			t.Errorf("delete page of a record once lent: %d\n%s", r.Status, squashed(r.Body))
		}
	})

	t.Run("Merge", func(t *testing.T) {
		keep, _ := e.newTitle(t, "Merged Zeppelins", "WEB-M1")
		gone, _ := e.newTitle(t, "Merged Zeppelins (duplicate)", "WEB-M2")
		path := fmt.Sprintf("/records/%d/merge", keep)
		r := e.get(t, c, fmt.Sprintf("%s?other=%d", path, gone))
		if r.Status != http.StatusOK {
			t.Fatalf("GET merge: %d", r.Status)
		}
		mustContain(t, "the merge page", r.Body, "WEB-M2", fmt.Sprintf("Merge record %d into record %d</button>", gone, keep))
		r = e.post(t, c, path, url.Values{"other": {fmt.Sprint(gone)}})
		if r.Status != http.StatusSeeOther || r.Location != fmt.Sprintf("/records/%d", keep) {
			t.Fatalf("merge: %d to %q", r.Status, r.Location)
		}
		r = e.get(t, c, fmt.Sprintf("/records/%d", gone))
		if r.Status != http.StatusMovedPermanently || r.Location != fmt.Sprintf("/records/%d", keep) {
			t.Errorf("the merged record's address: %d to %q", r.Status, r.Location)
		}
	})

	t.Run("Batch", func(t *testing.T) {
		e.newTitle(t, "Batched Zeppelins", "WEB-B1", "WEB-B2")
		form := url.Values{"barcodes": {"WEB-B1\nWEB-B2\nNO-SUCH"}, "field": {catalog.BatchLocation}, "value": {"Reading room"}}
		r := e.post(t, c, "/items/batch/preview", form)
		if r.Status != http.StatusOK {
			t.Fatalf("preview: %d", r.Status)
		}
		mustContain(t, "the preview", squashed(r.Body), "Not found", "Apply to 2 items")
		if n := e.count(t, `SELECT count(*) FROM items WHERE location = 'Reading room'`); n != 0 {
			t.Fatal("the preview changed items")
		}
		r = e.post(t, c, "/items/batch", form)
		if r.Status != http.StatusOK {
			t.Fatalf("apply: %d", r.Status)
		}
		if n := e.count(t, `SELECT count(*) FROM items WHERE location = 'Reading room'`); n != 2 {
			t.Fatalf("%d items moved", n)
		}
		batch := queryString(t, e, `SELECT CAST(max(id) AS TEXT) FROM item_batches`)
		r = e.post(t, c, "/items/batch/"+batch+"/undo", nil)
		if r.Status != http.StatusSeeOther {
			t.Fatalf("undo: %d", r.Status)
		}
		if n := e.count(t, `SELECT count(*) FROM items WHERE location = 'Reading room'`); n != 0 {
			t.Fatalf("%d items still moved after the undo", n)
		}
	})

	// Holds asked for a copy: the desk is told when the item form's
	// withdrawal cancels them, and when a batch's undo queues them again.
	t.Run("HoldsOnCopiesTold", func(t *testing.T) {
		rec, first := e.newTitle(t, "Held Zeppelins", "WEB-H1", "WEB-H2")
		second := int64(e.count(t, `SELECT id FROM items WHERE barcode = 'WEB-H2'`))
		for i, item := range []int64{first, second} {
			e.exec(t, `INSERT INTO holds (record_id, item_id, patron_id, pickup_branch_id, placed_at, priority)
				VALUES (?, ?, (SELECT id FROM patrons WHERE card = 'P0001'), 1, '2026-01-05 10:00:00', ?)`, rec, item, i+1)
		}
		path, _ := e.itemEdit(t, "WEB-H1")
		r := e.post(t, c, strings.TrimSuffix(path, "/edit"), url.Values{"barcode": {"WEB-H1"}, "item_type": {"BOOK"}, "home_branch": {"CEN"}, "status": {"withdrawn"}})
		if r.Status != http.StatusSeeOther {
			t.Fatalf("withdraw on the form: %d", r.Status)
		}
		mustContain(t, "the record page after the form", e.get(t, c, r.Location).Body, "1 hold on this copy cancelled: tell the patrons.")

		form := url.Values{"barcodes": {"WEB-H2"}, "field": {catalog.BatchWithdraw}, "value": {"Weeded"}}
		if r := e.post(t, c, "/items/batch", form); r.Status != http.StatusOK {
			t.Fatalf("apply: %d", r.Status)
		}
		batch := queryString(t, e, `SELECT CAST(max(id) AS TEXT) FROM item_batches`)
		r = e.post(t, c, "/items/batch/"+batch+"/undo", nil)
		if r.Status != http.StatusSeeOther {
			t.Fatalf("undo: %d", r.Status)
		}
		mustContain(t, "the batch page after the undo", e.get(t, c, r.Location).Body, "1 hold on those copies is back in its queue, where it was: tell the patrons.")
		if n := e.count(t, `SELECT count(*) FROM holds WHERE item_id = ? AND status = 'queued'`, second); n != 1 {
			t.Errorf("%d queued holds on WEB-H2 after the undo, want 1", n)
		}
	})
}
