package catalog_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/db/pgtest"
	"github.com/stacks-ils/stacks/holds"
	"github.com/stacks-ils/stacks/patrons"
)

// lib is a small library built from nothing on one engine: two branches, one
// item type, two patrons, and the records and copies each test adds. It is
// built by hand rather than copied from the demo so that `stacks check` holds
// on it on both engines (the demo's copy to PostgreSQL has no loans).
type lib struct {
	t   testing.TB
	d   *db.DB
	svc *catalog.Service
	now time.Time
}

func newLib(t testing.TB, e db.Engine) *lib {
	t.Helper()
	var d *db.DB
	if e == db.Postgres {
		d = pgtest.Open(t, db.Options{})
	} else {
		d = dbtest.Open(t, db.Options{})
	}
	l := &lib{t: t, d: d, svc: catalog.NewService(d, catalog.Timeouts{}), now: dbtest.Monday}
	d.Now = func() time.Time { return l.now }
	l.exec(`INSERT INTO branches (id, code, name) VALUES (1, 'CEN', 'Central'), (2, 'EAS', 'Eastside')`)
	l.exec(`INSERT INTO item_types (id, code, name) VALUES (1, 'BOOK', 'Book'), (2, 'DVD', 'DVD')`)
	l.exec(`INSERT INTO patron_categories (id, code, name) VALUES (1, 'ADULT', 'Adult')`)
	for i := 1; i <= 3; i++ {
		l.exec(`INSERT INTO patrons (id, card, surname, category_id, home_branch_id, expires_on, created_at) VALUES (?, ?, ?, 1, 1, '2030-01-01', ?)`,
			i, fmt.Sprintf("P%04d", i), fmt.Sprintf("Reader%d", i), db.FormatTime(l.now))
	}
	return l
}

func (l *lib) exec(q string, args ...any) {
	l.t.Helper()
	if err := l.d.Write(context.Background(), func(tx *db.Tx) error {
		_, err := tx.Exec(q, args...)
		return err
	}); err != nil {
		l.t.Fatalf("%s: %v", q, err)
	}
}

func (l *lib) int(q string, args ...any) int64 {
	l.t.Helper()
	var n int64
	if err := l.d.Read(context.Background(), func(tx *db.Tx) error { return tx.QueryRow(q, args...).Scan(&n) }); err != nil {
		l.t.Fatalf("%s: %v", q, err)
	}
	return n
}

func (l *lib) str(q string, args ...any) string {
	l.t.Helper()
	var s string
	if err := l.d.Read(context.Background(), func(tx *db.Tx) error { return tx.QueryRow(q, args...).Scan(&s) }); err != nil {
		l.t.Fatalf("%s: %v", q, err)
	}
	return s
}

// record adds a record with copies of the barcodes, at Central, and returns
// its id and its copies' ids.
func (l *lib) record(title string, barcodes ...string) (int64, []int64) {
	l.t.Helper()
	ctx := context.Background()
	id, err := l.svc.CreateRecord(ctx, editor, catalog.RecordInput{Title: title})
	if err != nil {
		l.t.Fatal(err)
	}
	var items []int64
	for _, b := range barcodes {
		it, err := l.svc.AddItem(ctx, editor, id, catalog.ItemInput{Barcode: b, ItemTypeCode: "BOOK", HomeBranchCode: "CEN", CallNumber: "823 " + b})
		if err != nil {
			l.t.Fatal(err)
		}
		items = append(items, it.ID)
	}
	return id, items
}

// lend records a loan of item to patron; returned says whether it is over.
func (l *lib) lend(itemID, patronID int64, returned bool) int64 {
	l.t.Helper()
	at := db.FormatTime(l.now.Add(-72 * time.Hour))
	var back any
	status := catalog.StatusOnLoan
	if returned {
		back, status = db.FormatTime(l.now.Add(-time.Hour)), catalog.StatusAvailable
	}
	var id int64
	if err := l.d.Write(context.Background(), func(tx *db.Tx) (err error) {
		id, err = tx.InsertID(`INSERT INTO loans (item_id, patron_id, branch_id, issued_at, due_at, returned_at) VALUES (?, ?, 1, ?, ?, ?) RETURNING id`,
			itemID, patronID, at, db.FormatTime(l.now.Add(24*time.Hour)), back)
		if err != nil {
			return err
		}
		_, err = tx.Exec(`UPDATE items SET status = ? WHERE id = ?`, status, itemID)
		return err
	}); err != nil {
		l.t.Fatal(err)
	}
	return id
}

// hold places a queued hold of patron on record (on copy itemID if not 0),
// placed at placed, last in the queue.
func (l *lib) hold(recordID, patronID, itemID int64, placed time.Time) int64 {
	l.t.Helper()
	var item any
	if itemID != 0 {
		item = itemID
	}
	var id int64
	if err := l.d.Write(context.Background(), func(tx *db.Tx) (err error) {
		id, err = tx.InsertID(`INSERT INTO holds (record_id, item_id, patron_id, pickup_branch_id, placed_at, priority)
			VALUES (?, ?, ?, 1, ?, (SELECT coalesce(max(priority), 0) + 1 FROM holds WHERE record_id = ? AND status = 'queued')) RETURNING id`,
			recordID, item, patronID, db.FormatTime(placed), recordID)
		return err
	}); err != nil {
		l.t.Fatal(err)
	}
	return id
}

// queue returns the ids of record's queued holds in queue order.
func (l *lib) queue(recordID int64) []int64 {
	l.t.Helper()
	var ids []int64
	if err := l.d.Read(context.Background(), func(tx *db.Tx) (err error) {
		ids, err = tx.IDs(`SELECT id FROM holds WHERE record_id = ? AND status = 'queued' ORDER BY priority`, recordID)
		return err
	}); err != nil {
		l.t.Fatal(err)
	}
	return ids
}

// checkClean runs every invariant `stacks check` verifies and fails the test
// on any violation.
func (l *lib) checkClean() {
	l.t.Helper()
	var all []stacks.Violation
	err := l.d.Read(context.Background(), func(tx *db.Tx) error {
		for _, check := range []func(*db.Tx) ([]stacks.Violation, error){db.Check, circulation.Check, holds.Check, patrons.Check, catalog.CheckMaintenance} {
			vs, err := check(tx)
			if err != nil {
				return err
			}
			all = append(all, vs...)
		}
		return nil
	})
	if err != nil {
		l.t.Fatal(err)
	}
	for _, v := range all {
		l.t.Errorf("stacks check: %v", v)
	}
}

func wantRefused(t *testing.T, err error, code string, words ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %s saying %q", code, words)
	}
	if stacks.ErrorCode(err) != code {
		t.Fatalf("error %v (code %s), want %s", err, stacks.ErrorCode(err), code)
	}
	for _, w := range words {
		if !strings.Contains(stacks.ErrorMessage(err), w) {
			t.Errorf("message %q does not say %q", stacks.ErrorMessage(err), w)
		}
	}
}

func sameIDs(a, b []int64) bool {
	return fmt.Sprint(a) == fmt.Sprint(b)
}

// TestWithdrawItem: a copy is withdrawn with its reason and leaves the
// patrons' view (harvested copies, availability); a hold on that very copy is
// cancelled and its queue closes up; a copy on loan is refused with what to do.
func TestWithdrawItem(t *testing.T) { forEngines(t, testWithdrawItem) }

func testWithdrawItem(t *testing.T, e db.Engine) {
	l := newLib(t, e)
	ctx := context.Background()
	rec, items := l.record("Weeded Zeppelins", "WZ1", "WZ2", "WZ3")
	onCopy := l.hold(rec, 1, items[0], l.now.Add(-3*time.Hour))
	title1 := l.hold(rec, 2, 0, l.now.Add(-2*time.Hour))
	title2 := l.hold(rec, 3, 0, l.now.Add(-time.Hour))
	l.lend(items[2], 1, false)
	l.checkClean()

	_, err := l.svc.WithdrawItem(ctx, editor, items[0], " ")
	wantRefused(t, err, stacks.EINVALID, "Say why")
	_, err = l.svc.WithdrawItem(ctx, editor, items[2], "Damaged")
	wantRefused(t, err, stacks.ECONFLICT, "checked out", "Check it in first")

	res, err := l.svc.WithdrawItem(ctx, editor, items[0], "Water damage")
	if err != nil {
		t.Fatal(err)
	}
	if res.Barcode != "WZ1" || res.HoldsCancelled != 1 {
		t.Errorf("result %+v, want WZ1 with 1 hold cancelled", res)
	}
	if got := l.str(`SELECT status || '|' || withdrawn_reason || '|' || withdrawn_at FROM items WHERE id = ?`, items[0]); got != "withdrawn|Water damage|"+db.FormatTime(l.now) {
		t.Errorf("item: %s", got)
	}
	if got := l.str(`SELECT status FROM holds WHERE id = ?`, onCopy); got != "cancelled" {
		t.Errorf("hold on the withdrawn copy is %s", got)
	}
	if q := l.queue(rec); !sameIDs(q, []int64{title1, title2}) {
		t.Errorf("queue %v, want %v", q, []int64{title1, title2})
	}
	if n := l.int(`SELECT count(*) FROM audit_log WHERE action = 'item.withdraw' AND object_id = ? AND detail LIKE '%Water damage%'`, items[0]); n != 1 {
		t.Errorf("%d audit rows", n)
	}
	h, err := l.svc.HarvestRecord(ctx, rec)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range h.Copies {
		if c.Barcode == "WZ1" {
			t.Errorf("harvest still shows the withdrawn copy: %+v", h.Copies)
		}
	}
	if len(h.Copies) != 2 {
		t.Errorf("harvested copies %+v, want WZ2 and WZ3", h.Copies)
	}
	_, err = l.svc.WithdrawItem(ctx, editor, items[0], "Again")
	wantRefused(t, err, stacks.ECONFLICT, "already withdrawn")
	l.checkClean()
}

// TestDeleteItem: a copy never lent is deleted; one lent is refused ("withdraw
// it instead"), and the fine charged on its loan stays, as the foreign keys of
// both engines guarantee even against a hand-run DELETE.
func TestDeleteItem(t *testing.T) { forEngines(t, testDeleteItem) }

func testDeleteItem(t *testing.T, e db.Engine) {
	l := newLib(t, e)
	ctx := context.Background()
	rec, items := l.record("Deleted Zeppelins", "DZ1", "DZ2")
	loan := l.lend(items[1], 2, true)
	l.exec(`INSERT INTO ledger (patron_id, kind, amount_cents, loan_id, description, created_at) VALUES (2, 'overdue', 150, ?, 'Overdue: Deleted Zeppelins (DZ2)', ?)`,
		loan, db.FormatTime(l.now))
	// A desk check-in and a stocktake scan of the copy never lent.
	l.exec(`INSERT INTO checkins (at, item_id, branch_id, actor) VALUES (?, ?, 1, 'desk')`, db.FormatTime(l.now), items[0])
	l.exec(`INSERT INTO stocktakes (id, branch_id, call_from, call_to, started_at) VALUES (1, 1, 'A', 'Z', ?)`, db.FormatTime(l.now))
	l.exec(`INSERT INTO stocktake_scans (stocktake_id, item_id, barcode, at) VALUES (1, ?, 'DZ1', ?)`, items[0], db.FormatTime(l.now))

	res, err := l.svc.DeleteItem(ctx, editor, items[0])
	if err != nil {
		t.Fatal(err)
	}
	if res.Barcode != "DZ1" || res.RecordID != rec {
		t.Errorf("result %+v", res)
	}
	if n := l.int(`SELECT count(*) FROM items WHERE id = ?`, items[0]); n != 0 {
		t.Errorf("item still there")
	}
	if got := l.str(`SELECT barcode FROM stocktake_scans WHERE item_id IS NULL`); got != "DZ1" {
		t.Errorf("stocktake scan: %q", got)
	}
	if n := l.int(`SELECT count(*) FROM audit_log WHERE action = 'item.delete' AND object_id = ?`, items[0]); n != 1 {
		t.Errorf("%d audit rows", n)
	}

	_, err = l.svc.DeleteItem(ctx, editor, items[1])
	wantRefused(t, err, stacks.ECONFLICT, "DZ2 (1 loan)", "Withdraw it instead")
	if err := l.d.Write(ctx, func(tx *db.Tx) error {
		_, err := tx.Exec(`DELETE FROM items WHERE id = ?`, items[1])
		return err
	}); err == nil {
		t.Fatal("a hand-run DELETE of a lent item succeeded: the loans' foreign key does not hold")
	}
	if _, err := l.svc.WithdrawItem(ctx, editor, items[1], "Weeded"); err != nil {
		t.Fatal(err)
	}
	if got := l.str(`SELECT description || ' ' || amount_cents FROM ledger WHERE loan_id = ?`, loan); got != "Overdue: Deleted Zeppelins (DZ2) 150" {
		t.Errorf("ledger row: %q", got)
	}
	_, err = l.svc.DeleteItem(ctx, editor, 999999)
	wantRefused(t, err, stacks.ENOTFOUND)
	l.checkClean()
}

// TestDeleteRecord: a record whose copies were never lent is deleted with
// them; its open holds are cancelled (and counted for the desk) or moved to
// a record named, joining its queue in the order placed; OAI-PMH reports it
// deleted. A record with a copy out, or a copy once lent, is refused.
func TestDeleteRecord(t *testing.T) { forEngines(t, testDeleteRecord) }

func testDeleteRecord(t *testing.T, e db.Engine) {
	l := newLib(t, e)
	ctx := context.Background()
	t0 := l.now.Add(-10 * time.Hour)

	t.Run("CancelHolds", func(t *testing.T) {
		rec, items := l.record("Cancelled Zeppelins", "CZ1", "CZ2")
		h1 := l.hold(rec, 1, 0, t0)
		l.hold(rec, 2, items[1], t0.Add(time.Hour))
		l.exec(`INSERT INTO holds (record_id, patron_id, pickup_branch_id, placed_at, priority, status, closed_at, cancel_reason) VALUES (?, 3, 1, ?, 0, 'cancelled', ?, 'patron asked')`,
			rec, db.FormatTime(t0), db.FormatTime(t0))
		rd, err := l.svc.RecordDeletion(ctx, rec)
		if err != nil || rd.Refused != nil || rd.OpenHolds != 2 || len(rd.Copies) != 2 {
			t.Fatalf("deletion preview %+v, %v", rd, err)
		}
		res, err := l.svc.DeleteRecord(ctx, editor, rec, 0)
		if err != nil {
			t.Fatal(err)
		}
		if res.CopiesDeleted != 2 || res.HoldsCancelled != 2 || res.HoldsMoved != 0 || res.Title != "Cancelled Zeppelins" {
			t.Errorf("result %+v", res)
		}
		if n := l.int(`SELECT (SELECT count(*) FROM records WHERE id = ?1) + (SELECT count(*) FROM items WHERE record_id = ?1) + (SELECT count(*) FROM holds WHERE record_id = ?1)`, rec); n != 0 {
			t.Errorf("%d rows of the record left", n)
		}
		if n := l.int(`SELECT count(*) FROM audit_log WHERE action = 'hold.cancelled' AND object_id = ?`, h1); n != 1 {
			t.Errorf("the hold's cancellation is not audited")
		}
		if n := l.int(`SELECT count(*) FROM audit_log WHERE action = 'record.delete' AND object_id = ? AND detail LIKE '%2 copies%2 open holds cancelled%'`, rec); n != 1 {
			t.Errorf("the deletion is not audited")
		}
		h, err := l.svc.HarvestRecord(ctx, rec)
		if err != nil || !h.Deleted {
			t.Errorf("harvest of the deleted record: %+v, %v", h, err)
		}
		if known, err := l.svc.RecordKnown(ctx, rec); err != nil || !known {
			t.Errorf("RecordKnown: %v, %v", known, err)
		}
		l.checkClean()
	})

	t.Run("MoveHolds", func(t *testing.T) {
		gone, goneItems := l.record("Duplicate Zeppelins", "MZ1")
		kept, _ := l.record("Zeppelins", "MZ2")
		k1 := l.hold(kept, 1, 0, t0)
		g1 := l.hold(gone, 2, goneItems[0], t0.Add(time.Minute))
		k2 := l.hold(kept, 3, 0, t0.Add(2*time.Minute))
		g2 := l.hold(gone, 1, 0, t0.Add(3*time.Minute))
		_, err := l.svc.DeleteRecord(ctx, editor, gone, gone)
		wantRefused(t, err, stacks.EINVALID, "another record")
		_, err = l.svc.DeleteRecord(ctx, editor, gone, 999999)
		wantRefused(t, err, stacks.ENOTFOUND, "999999")
		res, err := l.svc.DeleteRecord(ctx, editor, gone, kept)
		if err != nil {
			t.Fatal(err)
		}
		if res.HoldsMoved != 2 || res.MovedTo != kept || res.HoldsCancelled != 0 {
			t.Errorf("result %+v", res)
		}
		if q := l.queue(kept); !sameIDs(q, []int64{k1, g1, k2, g2}) {
			t.Errorf("queue %v, want %v (by time placed)", q, []int64{k1, g1, k2, g2})
		}
		if n := l.int(`SELECT count(*) FROM holds WHERE id = ? AND item_id IS NULL`, g1); n != 1 {
			t.Errorf("the hold on the deleted copy still names it")
		}
		l.checkClean()
	})

	t.Run("Refused", func(t *testing.T) {
		rec, items := l.record("Lent Zeppelins", "LZ1", "LZ2")
		l.lend(items[0], 1, false)
		_, err := l.svc.DeleteRecord(ctx, editor, rec, 0)
		wantRefused(t, err, stacks.ECONFLICT, "LZ1 (Checked out)", "check them in")
		l.exec(`UPDATE loans SET returned_at = ? WHERE item_id = ?`, db.FormatTime(l.now), items[0])
		l.exec(`UPDATE items SET status = 'available' WHERE id = ?`, items[0])
		rd, err := l.svc.RecordDeletion(ctx, rec)
		if err != nil {
			t.Fatal(err)
		}
		wantRefused(t, rd.Refused, stacks.ECONFLICT, "LZ1 (1 loan)", "Withdraw", "merge it")
		_, err = l.svc.DeleteRecord(ctx, editor, rec, 0)
		wantRefused(t, err, stacks.ECONFLICT, "LZ1 (1 loan)")
		if n := l.int(`SELECT count(*) FROM items WHERE record_id = ?`, rec); n != 2 {
			t.Errorf("%d copies left after a refused deletion", n)
		}
		_, err = l.svc.DeleteRecord(ctx, editor, 999999, 0)
		wantRefused(t, err, stacks.ENOTFOUND)
		l.checkClean()
	})
}

// TestWithdrawalFollowsStatus: an item put back into circulation by the item
// form forgets its withdrawal; one withdrawn there, without a reason, still
// says when.
func TestWithdrawalFollowsStatus(t *testing.T) { forEngines(t, testWithdrawalFollowsStatus) }

func testWithdrawalFollowsStatus(t *testing.T, e db.Engine) {
	l := newLib(t, e)
	ctx := context.Background()
	_, items := l.record("Returning Zeppelins", "RZ1")
	in := catalog.ItemInput{Barcode: "RZ1", ItemTypeCode: "BOOK", HomeBranchCode: "CEN", CallNumber: "823 RZ1"}
	if _, err := l.svc.WithdrawItem(ctx, editor, items[0], "Weeded"); err != nil {
		t.Fatal(err)
	}
	l.now = l.now.Add(time.Hour)
	if _, err := l.svc.UpdateItem(ctx, editor, items[0], in, catalog.StatusAvailable); err != nil {
		t.Fatal(err)
	}
	if got := l.str(`SELECT status || '|' || withdrawn_reason || '|' || coalesce(withdrawn_at, '-') FROM items WHERE id = ?`, items[0]); got != "available||-" {
		t.Errorf("item back in circulation: %s", got)
	}
	l.now = l.now.Add(time.Hour)
	if _, err := l.svc.UpdateItem(ctx, editor, items[0], in, catalog.StatusWithdrawn); err != nil {
		t.Fatal(err)
	}
	if got := l.str(`SELECT status || '|' || coalesce(withdrawn_at, '-') FROM items WHERE id = ?`, items[0]); got != "withdrawn|"+db.FormatTime(l.now) {
		t.Errorf("item withdrawn by the form: %s", got)
	}
	l.checkClean()
}

// TestFormWithdrawalEndsCopyHolds: an item withdrawn on its form, as one
// withdrawn by Withdraw, cancels the holds asked for that copy and leaves the
// record's queue whole.
func TestFormWithdrawalEndsCopyHolds(t *testing.T) { forEngines(t, testFormWithdrawalEndsCopyHolds) }

func testFormWithdrawalEndsCopyHolds(t *testing.T, e db.Engine) {
	l := newLib(t, e)
	ctx := context.Background()
	rec, items := l.record("Formally Weeded Zeppelins", "FW1", "FW2")
	onCopy := l.hold(rec, 1, items[0], l.now.Add(-2*time.Hour))
	onTitle := l.hold(rec, 2, 0, l.now.Add(-time.Hour))
	in := catalog.ItemInput{Barcode: "FW1", ItemTypeCode: "BOOK", HomeBranchCode: "CEN", CallNumber: "823 FW1"}
	res, err := l.svc.UpdateItem(ctx, editor, items[0], in, catalog.StatusWithdrawn)
	if err != nil {
		t.Fatal(err)
	}
	if res.HoldsCancelled != 1 || res.Item.Status != catalog.StatusWithdrawn {
		t.Errorf("saved %+v, %d holds cancelled; want withdrawn, 1", res.Item, res.HoldsCancelled)
	}
	if got := l.str(`SELECT status || '|' || cancel_reason FROM holds WHERE id = ?`, onCopy); got != "cancelled|The copy asked for was withdrawn from the collection." {
		t.Errorf("hold on the withdrawn copy: %s", got)
	}
	if q := l.queue(rec); !sameIDs(q, []int64{onTitle}) {
		t.Errorf("queue %v, want %v", q, []int64{onTitle})
	}
	if n := l.int(`SELECT priority FROM holds WHERE id = ?`, onTitle); n != 1 {
		t.Errorf("the title hold is at position %d, want 1", n)
	}
	l.checkClean()
}

// TestCheckMaintenance: the invariants of withdrawals and merges find what a
// hand-run statement breaks.
func TestCheckMaintenance(t *testing.T) { forEngines(t, testCheckMaintenance) }

func testCheckMaintenance(t *testing.T, e db.Engine) {
	l := newLib(t, e)
	keep, items := l.record("Checked Zeppelins", "CK1", "CK2")
	l.exec(`UPDATE items SET withdrawn_reason = 'stale' WHERE id = ?`, items[0])
	l.exec(`UPDATE items SET status = 'withdrawn' WHERE id = ?`, items[1])
	l.exec(`UPDATE items SET withdrawn_at = NULL WHERE id = ?`, items[1])
	held := l.hold(keep, 1, items[1], l.now)
	l.exec(`INSERT INTO record_redirects (from_id, to_id, merged_at) VALUES (?, ?, ?)`, keep, keep, db.FormatTime(l.now))
	var got []string
	if err := l.d.Read(context.Background(), func(tx *db.Tx) error {
		vs, err := catalog.CheckMaintenance(tx)
		for _, v := range vs {
			got = append(got, v.String())
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{"CK1 (id " + fmt.Sprint(items[0]) + ") is available but has a withdrawal", "CK2 (id " + fmt.Sprint(items[1]) + ") is withdrawn without the date",
		fmt.Sprintf("hold %d is queued for item CK2 (id %d), which is withdrawn", held, items[1]),
		fmt.Sprintf("record %d was merged into record %d, but is in the catalogue itself", keep, keep)}
	if len(got) != len(want) {
		t.Fatalf("violations %q, want %d", got, len(want))
	}
	for i, w := range want {
		if !strings.Contains(got[i], w) {
			t.Errorf("violation %q does not say %q", got[i], w)
		}
	}
}
