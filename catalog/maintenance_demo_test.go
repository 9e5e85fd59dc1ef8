package catalog_test

import (
	"context"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/demo"
)

// TestMaintenanceOnDemo runs each operation on the demo library, with its
// loans, queues and hold shelf, and `stacks check` after each: merging the
// most wanted title into another that patrons also wait for, withdrawing
// and batch-moving 50 copies, withdrawing a copy of every other title on the
// shelf, deleting the records whose copies were never lent. The demo's loans
// and holds exist on SQLite only (its PostgreSQL copy is the catalogue alone).
func TestMaintenanceOnDemo(t *testing.T) {
	d := demoDBOn(t, db.SQLite, demo.Options{Titles: 300, Patrons: 40}, db.Options{})
	now := dbtest.Monday.Add(time.Hour)
	d.Now = func() time.Time { return now }
	l := &lib{t: t, d: d, svc: catalog.NewService(d, catalog.Timeouts{}), now: now}
	ctx := context.Background()
	// `stacks check` runs in a process of its own: its connection is new. A
	// pooled connection that read the search index before records were deleted
	// by another reports FTS5 corruption that a new connection does not see.
	check := func() {
		t.Helper()
		fresh, err := db.Open(d.Path(), db.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer fresh.Close()
		(&lib{t: t, d: fresh}).checkClean()
	}
	check()

	// The two records with the longest queues, one with a trapped hold if any.
	var ids []int64
	if err := d.Read(ctx, func(tx *db.Tx) (err error) {
		ids, err = tx.IDs(`SELECT record_id FROM holds WHERE status IN ('queued', 'in_transit', 'waiting')
			GROUP BY record_id ORDER BY max(CASE WHEN status = 'waiting' THEN 1 ELSE 0 END) DESC, count(*) DESC, record_id LIMIT 2`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(ids) < 2 {
		t.Fatalf("the demo has %d titles with holds, want 2", len(ids))
	}
	open := l.int(`SELECT count(*) FROM holds WHERE record_id IN (?, ?) AND status IN ('queued', 'in_transit', 'waiting')`, ids[0], ids[1])
	res, err := l.svc.MergeRecords(ctx, editor, ids[1], ids[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := l.int(`SELECT count(*) FROM holds WHERE record_id = ? AND status IN ('queued', 'in_transit', 'waiting')`, ids[1]); got != open-int64(res.HoldsCancelled) {
		t.Errorf("%d open holds after the merge, want %d less %d duplicates", got, open, res.HoldsCancelled)
	}
	check()

	// Fifty copies on the shelf, moved to Eastside, then withdrawn, in batches.
	var barcodes []string
	if err := d.Read(ctx, func(tx *db.Tx) error {
		rows, err := tx.Query(`SELECT barcode FROM items WHERE status = 'available' ORDER BY id LIMIT 50`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var b string
			if err := rows.Scan(&b); err != nil {
				return err
			}
			barcodes = append(barcodes, b)
		}
		return rows.Err()
	}); err != nil {
		t.Fatal(err)
	}
	moved, err := l.svc.ApplyBatch(ctx, editor, barcodes, catalog.BatchChange{Field: catalog.BatchHomeBranch, Value: "EAS"})
	if err != nil || moved.Changed+moved.Unchanged != 50 {
		t.Fatalf("batch move: %+v, %v", moved.BatchPreview, err)
	}
	check()
	// Every copy of the demo's, whatever its state: those circulation holds are left as they are.
	var all []string
	if err := d.Read(ctx, func(tx *db.Tx) error {
		rows, err := tx.Query(`SELECT barcode FROM items ORDER BY id`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var b string
			if err := rows.Scan(&b); err != nil {
				return err
			}
			all = append(all, b)
		}
		return rows.Err()
	}); err != nil {
		t.Fatal(err)
	}
	withdrawn, err := l.svc.ApplyBatch(ctx, editor, all[:len(all)/2], catalog.BatchChange{Field: catalog.BatchWithdraw, Value: "Weeded"})
	if err != nil {
		t.Fatal(err)
	}
	if withdrawn.Refused == 0 || withdrawn.Changed == 0 {
		t.Errorf("batch withdrawal of half the copies: %d changed, %d refused; the demo lends and holds some of them", withdrawn.Changed, withdrawn.Refused)
	}
	check()
	now = now.Add(time.Minute)
	l.now = now
	if _, err := l.svc.UndoBatch(ctx, editor, withdrawn.BatchID); err != nil {
		t.Fatal(err)
	}
	check()

	// Delete every record that can be: those whose copies were never lent.
	var records []int64
	if err := d.Read(ctx, func(tx *db.Tx) (err error) {
		records, err = tx.IDs(`SELECT id FROM records ORDER BY id`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	deleted := 0
	for _, id := range records {
		rd, err := l.svc.RecordDeletion(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if rd.Refused != nil {
			continue
		}
		if _, err := l.svc.DeleteRecord(ctx, editor, id, 0); err != nil {
			t.Fatalf("record %d: the preview allowed its deletion, the deletion: %v", id, err)
		}
		deleted++
	}
	if deleted == 0 || deleted == len(records) {
		t.Errorf("deleted %d of %d records: the demo has records lent and not", deleted, len(records))
	}
	check()
}
